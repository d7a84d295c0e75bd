// Checks for `project create` input: names, hosts, CIDRs, quantities, enums.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::model {
namespace {

std::string printableCut(const std::string& value) {
    std::string out;
    for (unsigned char c : value.substr(0, 80)) out += (c < 0x20 || c == 0x7f) ? '?' : char(c);
    return out;
}

bool isAddress(const std::string& text) {
    std::array<unsigned char, 16> buffer{};
    return inet_pton(AF_INET, text.c_str(), buffer.data()) == 1 ||
           inet_pton(AF_INET6, text.c_str(), buffer.data()) == 1;
}

bool allDigits(const std::string& text) {
    return !text.empty() && std::all_of(text.begin(), text.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

// A positive quantity; returns its value for comparisons.
double positiveQuantity(const std::string& value, const std::string& flag) {
    double amount = parseQuantity(value, flag);
    if (amount <= 0)
        throw UsageError(fmt::format("{} must be greater than 0, got \"{}\"", flag, value));
    return amount;
}

void requireAtMost(const std::string& small, const std::string& smallFlag, const std::string& large,
                   const std::string& largeFlag) {
    if (parseQuantity(small, smallFlag) > parseQuantity(large, largeFlag))
        throw UsageError(
            fmt::format("{} {} is larger than {} {}", smallFlag, small, largeFlag, large));
}

}  // namespace

void validateProjectName(const std::string& name) {
    validateDnsLabel(name, "project name");
    if (name == "default" || name.rfind("kube-", 0) == 0 || name.rfind("openshift", 0) == 0)
        throw UsageError(fmt::format(
            "project name \"{}\" is reserved for the cluster itself: pick another name", name));
}

AllowedHost parseAllowedHost(const std::string& text) {
    AllowedHost result;
    std::string host = text;
    // A URL pasted whole (walk 6): its host and port are what --allow-host takes.
    if (const auto scheme = text.find("://"); scheme != std::string::npos) {
        std::string rest = text.substr(scheme + 3);
        rest = rest.substr(0, rest.find_first_of("/?#"));
        const std::string port = text.rfind("https", 0) == 0 ? "443" : "80";
        throw UsageError(fmt::format(
            "--allow-host \"{}\" is a URL: give its host and port, --allow-host {}",
            printableCut(text),
            printableCut(rest.find(':') == std::string::npos || rest.find('[') != std::string::npos
                             ? rest + ":" + port
                             : rest)));
    }
    if (std::count(text.begin(), text.end(), ':') > 1 || text.find('[') != std::string::npos ||
        text.find('/') != std::string::npos)
        throw UsageError(fmt::format(
            "--allow-host \"{}\" is an address or a range, not a name: use --allow-cidr for it",
            printableCut(text)));
    if (auto colon = text.find(':'); colon != std::string::npos) {
        host = text.substr(0, colon);
        result.port = parsePort(text.substr(colon + 1), "--allow-host " + printableCut(text));
    }
    std::transform(host.begin(), host.end(), host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!host.empty() && host.back() == '.') host.pop_back();
    if (host.find('*') != std::string::npos)
        throw UsageError(
            fmt::format("--allow-host \"{}\": wildcards are not supported; list each host name",
                        printableCut(text)));
    if (isAddress(host))
        throw UsageError(
            fmt::format("--allow-host \"{}\" is an address, not a name: use "
                        "--allow-cidr {}/{} instead",
                        printableCut(text), host, host.find(':') == std::string::npos ? 32 : 128));
    validateDnsSubdomain(host, "--allow-host");
    auto lastDot = host.rfind('.');
    if (allDigits(lastDot == std::string::npos ? host : host.substr(lastDot + 1)))
        throw UsageError(fmt::format("--allow-host \"{}\" is neither a host name nor an address",
                                     printableCut(text)));
    result.host = host;
    return result;
}

std::string parseCidr(const std::string& text) {
    auto invalid = [&](const std::string& why) {
        return UsageError(
            fmt::format("--allow-cidr \"{}\" is not a valid CIDR: {}", printableCut(text), why));
    };
    auto slash = text.find('/');
    std::string address = text.substr(0, slash);
    bool v6 = address.find(':') != std::string::npos;
    int family = v6 ? AF_INET6 : AF_INET;
    int maxPrefix = v6 ? 128 : 32;
    std::array<unsigned char, 16> bytes{};
    if (inet_pton(family, address.c_str(), bytes.data()) != 1)
        throw invalid("want an IPv4 or IPv6 network such as 10.0.0.0/8 or 2001:db8::/32");
    int prefix = maxPrefix;
    if (slash != std::string::npos) {
        std::string digits = text.substr(slash + 1);
        if (!allDigits(digits) || digits.size() > 3 || std::stoi(digits) > maxPrefix)
            throw invalid(fmt::format("the prefix length must be 0-{}", maxPrefix));
        prefix = std::stoi(digits);
    }
    int length = v6 ? 16 : 4;
    for (int bit = prefix; bit < length * 8; ++bit) {
        if (bytes[bit / 8] & (0x80 >> (bit % 8))) {
            std::array<unsigned char, 16> network = bytes;
            for (int clear = prefix; clear < length * 8; ++clear)
                network[clear / 8] &= static_cast<unsigned char>(~(0x80 >> (clear % 8)));
            char canonical[INET6_ADDRSTRLEN] = {};
            inet_ntop(family, network.data(), canonical, sizeof canonical);
            throw invalid(
                fmt::format("it has host bits set; did you mean {}/{}?", canonical, prefix));
        }
    }
    char canonical[INET6_ADDRSTRLEN] = {};
    inet_ntop(family, bytes.data(), canonical, sizeof canonical);
    return fmt::format("{}/{}", canonical, prefix);
}

EgressMechanism parseEgressMechanism(const std::string& text) {
    if (text == "auto") return EgressMechanism::Auto;
    if (text == "networkpolicy") return EgressMechanism::NetworkPolicy;
    if (text == "egressfirewall") return EgressMechanism::EgressFirewall;
    if (text == "cilium") return EgressMechanism::Cilium;
    throw UsageError(fmt::format(
        "invalid value \"{}\" for --egress: want auto, networkpolicy, egressfirewall or cilium",
        printableCut(text)));
}

std::string egressMechanismName(EgressMechanism mechanism) {
    switch (mechanism) {
        case EgressMechanism::Auto:
            return "auto";
        case EgressMechanism::NetworkPolicy:
            return "networkpolicy";
        case EgressMechanism::EgressFirewall:
            return "egressfirewall";
        case EgressMechanism::Cilium:
            return "cilium";
    }
    return "auto";
}

void validateProjectOptions(ProjectOptions& options) {
    validateProjectName(options.name);
    double cpu = positiveQuantity(options.cpu, "--cpu");
    double memory = positiveQuantity(options.memory, "--memory");
    positiveQuantity(options.storage, "--storage");
    for (const auto& [value, flag] :
         {std::pair{options.pods, "--pods"}, std::pair{options.persistentVolumeClaims, "--pvcs"}}) {
        if (!allDigits(value) || value.size() > 6)
            throw UsageError(
                fmt::format("{} must be a whole number, got \"{}\"", flag, printableCut(value)));
    }
    if (std::stoi(options.pods) < 1) throw UsageError("--pods must be at least 1");
    positiveQuantity(options.containerCpu, "--container-cpu");
    positiveQuantity(options.containerMemory, "--container-memory");
    if (options.maxContainerCpu.empty()) options.maxContainerCpu = cpu < 2 ? options.cpu : "2";
    if (options.maxContainerMemory.empty())
        options.maxContainerMemory = memory < 4.0 * 1024 * 1024 * 1024 ? options.memory : "4Gi";
    positiveQuantity(options.maxContainerCpu, "--max-container-cpu");
    positiveQuantity(options.maxContainerMemory, "--max-container-memory");
    requireAtMost(options.containerCpu, "--container-cpu", options.maxContainerCpu,
                  "--max-container-cpu");
    requireAtMost(options.containerMemory, "--container-memory", options.maxContainerMemory,
                  "--max-container-memory");
    requireAtMost(options.maxContainerCpu, "--max-container-cpu", options.cpu, "--cpu");
    requireAtMost(options.maxContainerMemory, "--max-container-memory", options.memory, "--memory");
    parseLifetime(options.defaultLifetime, "--default-lifetime");
    if (options.podSecurity != "restricted" && options.podSecurity != "baseline" &&
        options.podSecurity != "privileged")
        throw UsageError(fmt::format(
            "invalid value \"{}\" for --pod-security: want restricted, baseline or privileged",
            printableCut(options.podSecurity)));
    if (!options.runtimeClass.empty())
        validateDnsSubdomain(options.runtimeClass, "--runtime-class");
    for (const auto& registry : options.allowRegistries) {
        // HOST[:PORT][/PATH]: no scheme, no tag, no comma (the annotation's separator).
        const bool bad = registry.empty() || registry.find("://") != std::string::npos ||
                         registry.find_first_of(", @\t\n") != std::string::npos ||
                         registry.back() == '/';
        if (bad)
            throw UsageError(fmt::format(
                "invalid value \"{}\" for --allow-registry: want a registry host (docker.io, "
                "registry.example.com:5000) or host/path (ghcr.io/team)",
                printableCut(registry)));
    }
    if (!options.allowDns && !options.allowHosts.empty())
        throw UsageError(
            "--allow-host needs DNS inside the project: drop --no-dns, or use --allow-cidr");
}

}  // namespace rossoctl::model
