#include "project_create_notes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rossoctl/app/project_dns.hpp"

namespace rossoctl::commands {

void warnEgressChanged(app::Context& context, const std::string& project,
                       const std::vector<std::string>& hosts, const std::vector<std::string>& cidrs,
                       bool noDns) {
    std::string allowed;
    for (const auto& host : hosts) allowed += (allowed.empty() ? "" : ", ") + host;
    for (const auto& cidr : cidrs) allowed += (allowed.empty() ? "" : ", ") + cidr;
    const std::string now =
        !allowed.empty() ? fmt::format("allowed only to {}{}", allowed, noDns ? "" : " (and DNS)")
        : noDns          ? std::string("denied to every destination")
                         : std::string("denied to every destination but DNS");
    context.err() << fmt::format(
        "Warning: the egress policy of project {} changed: egress is now {}. Flags of earlier "
        "runs are not kept; repeat every --allow-host/--allow-cidr still wanted.\n",
        project, now);
}

void warnLimitsChanged(app::Context& context, const std::string& project,
                       const std::vector<std::string>& changes) {
    if (changes.empty()) return;
    context.err() << fmt::format(
        "Warning: the quota of project {} changed: {}. Flags of earlier runs are not kept; "
        "repeat every one still wanted.\n",
        project, fmt::join(changes, ", "));
}

void warnClusterDnsRecursion(app::Context& context, const std::string& project) {
    const auto dns = app::readClusterDns(context.client());
    const auto assessment = app::assessClusterDns(dns);
    if (assessment.recursion == app::DnsRecursion::Closed) return;
    if (assessment.recursion == app::DnsRecursion::Recurses)
        context.err() << fmt::format(
            "Warning: the cluster DNS resolves outside names ({}), so pods of {} allowed DNS can "
            "tunnel data out through kube-dns and `sandbox verify` fails egress; --no-dns "
            "closes it\n",
            assessment.summary, project);
    else
        context.err() << fmt::format(
            "Warning: the cluster DNS could not be checked ({}): pods of {} allowed DNS may "
            "tunnel data out through kube-dns and `sandbox verify` reports egress unproven; "
            "--no-dns closes it\n",
            assessment.summary, project);
}

std::string shellCommandLine(const std::vector<std::string>& arguments) {
    std::string line = "rossoctl";
    for (const auto& word : arguments) {
        const bool plain =
            !word.empty() && word.find_first_not_of(
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789_@%+=:,./-") == std::string::npos;
        line += ' ';
        if (plain) {
            line += word;
            continue;
        }
        line += '\'';
        for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += '\'';
    }
    return line;
}

}  // namespace rossoctl::commands
