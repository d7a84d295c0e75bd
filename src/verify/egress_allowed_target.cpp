// An --egress-target the project allows: a connection to it says nothing about denial, so the
// egress check's live part is unproven and says to pick a target outside the allow-list.
#include <fmt/format.h>

#include <cctype>

#include "rossoctl/errors.hpp"
#include "rossoctl/verify/isolation.hpp"

namespace rossoctl::verify {

namespace {

std::string lower(std::string value) {
    for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    while (!value.empty() && value.back() == '.') value.pop_back();
    return value;
}

// "*.example.com" covers subdomains, as the FQDN rules of EgressFirewall and Cilium do.
bool nameMatches(const std::string& pattern, const std::string& host) {
    const std::string want = lower(pattern), have = lower(host);
    if (want.rfind("*.", 0) == 0)
        return have.size() > want.size() - 1 &&
               have.compare(have.size() - (want.size() - 1), want.size() - 1, want.substr(1)) == 0;
    return want == have;
}

}  // namespace

std::string targetAllowedBy(const EgressTarget& target, const std::string& address,
                            const model::EgressAllowance& allowance) {
    for (const auto& name : allowance.hostNames)
        if (nameMatches(name, target.host))
            return fmt::format("{} is an allowed host ({})", target.host,
                               allowance.origin.empty() ? "the project" : allowance.origin);
    for (const std::string& candidate : {address, target.host}) {
        if (candidate.empty()) continue;
        model::AddressSet one;
        try {
            one = model::AddressSet::parse(candidate);
        } catch (const Error&) {
            continue;  // a host name, not an address
        }
        for (const auto& [addresses, ports] : allowance.addresses)
            if (addresses.contains(one) && ports.contains(model::Protocol::TCP, target.port))
                return fmt::format("{} TCP {} is within the allowed {} ({})", candidate,
                                   target.port, addresses.describe(),
                                   allowance.origin.empty() ? "the project" : allowance.origin);
    }
    return "";
}

}  // namespace rossoctl::verify
