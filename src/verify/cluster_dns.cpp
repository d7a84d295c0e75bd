// DNS as a tunnel (issue 35 point 11): a cluster DNS that recurses (CoreDNS's forward, proxy or
// grpc for a zone outside the cluster's) carries any name a pod asks to the outside, so DNS to
// it is egress beyond the project. The Corefile is parsed minimally: comments, server blocks
// with several keys (".:53", "dns://.", "cluster.local:53"), directives and their sub-blocks.
#include "rossoctl/verify/cluster_dns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace rossoctl::verify {

namespace {

std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string word; in >> word;) out.push_back(word);
    return out;
}

bool endsWith(const std::string& name, const std::string& zone) {
    return name == zone || (name.size() > zone.size() &&
                            name.compare(name.size() - zone.size(), zone.size(), zone) == 0 &&
                            name[name.size() - zone.size() - 1] == '.');
}

}  // namespace

std::string corefileZone(std::string key) {
    if (const auto scheme = key.find("://"); scheme != std::string::npos)
        key = key.substr(scheme + 3);
    if (const auto colon = key.rfind(':'); colon != std::string::npos) key = key.substr(0, colon);
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key.empty() || key == ".") return ".";
    return key.back() == '.' ? key : key + ".";
}

std::optional<std::vector<CorefileServer>> parseCorefile(const std::string& text) {
    std::vector<CorefileServer> servers;
    std::istringstream in(text);
    int depth = 0;
    std::vector<std::string> pendingKeys;  // a block's keys may span lines before its "{"
    for (std::string raw; std::getline(in, raw);) {
        const auto hash = raw.find('#');
        std::string line = trimmed(hash == std::string::npos ? raw : raw.substr(0, hash));
        if (line.empty()) continue;
        // Braces are tokens of their own here: split them off the words around them.
        std::string spaced;
        for (char c : line)
            spaced += c == '{' || c == '}' ? std::string(" ") + c + " " : std::string(1, c);
        std::vector<std::string> directive;
        for (const auto& word : words(spaced)) {
            if (word == "{") {
                if (depth == 0) {
                    CorefileServer server;
                    for (auto key : pendingKeys) {
                        key.erase(std::remove(key.begin(), key.end(), ','), key.end());
                        if (!key.empty()) server.zones.push_back(corefileZone(key));
                    }
                    pendingKeys.clear();
                    if (server.zones.empty()) return std::nullopt;
                    servers.push_back(std::move(server));
                } else if (depth == 1 && !directive.empty()) {
                    servers.back().directives.push_back(directive);
                    directive.clear();
                }
                ++depth;
            } else if (word == "}") {
                if (depth == 0) return std::nullopt;
                if (depth == 1 && !directive.empty())
                    servers.back().directives.push_back(directive);
                directive.clear();
                --depth;
            } else if (depth == 0) {
                pendingKeys.push_back(word);
            } else if (depth == 1) {
                directive.push_back(word);
            }
        }
        if (depth == 1 && !directive.empty()) servers.back().directives.push_back(directive);
    }
    if (depth != 0 || !pendingKeys.empty()) return std::nullopt;
    return servers;
}

Finding clusterDnsRecursion(const ClusterDns& dns) {
    if (!dns.corefile)
        return Finding{Verdict::Unproven,
                       {fmt::format("{}: {}: whether DNS to kube-dns resolves outside names (a "
                                    "tunnel out) is not known",
                                    dns.source, dns.problem)},
                       ""};
    const auto servers = parseCorefile(*dns.corefile);
    if (!servers)
        return Finding{Verdict::Unproven,
                       {fmt::format("{} Corefile could not be parsed: whether DNS to kube-dns "
                                    "resolves outside names is not known",
                                    dns.source)},
                       ""};
    // The cluster's own zones: what the kubernetes plugin serves, and the reverse zones.
    std::vector<std::string> cluster = {"cluster.local.", "in-addr.arpa.", "ip6.arpa."};
    for (const auto& server : *servers)
        for (const auto& directive : server.directives)
            if (directive.front() == "kubernetes")
                for (size_t i = 1; i < directive.size(); ++i)
                    cluster.push_back(corefileZone(directive[i]));
    auto isCluster = [&](const std::string& zone) {
        return std::any_of(cluster.begin(), cluster.end(),
                           [&](const std::string& own) { return endsWith(zone, own); });
    };
    Finding finding{Verdict::Pass, {}, ""};
    for (const auto& server : *servers) {
        const bool outside = std::any_of(server.zones.begin(), server.zones.end(),
                                         [&](const std::string& zone) { return !isCluster(zone); });
        if (!outside) continue;
        for (const auto& directive : server.directives) {
            const std::string& plugin = directive.front();
            if (plugin != "forward" && plugin != "proxy" && plugin != "grpc") continue;
            std::string line;
            for (const auto& word : directive) line += (line.empty() ? "" : " ") + word;
            finding.verdict = Verdict::Fail;
            finding.evidence.push_back(fmt::format(
                "{} Corefile: {}: DNS to kube-dns resolves outside names (a tunnel out)",
                dns.source, line));
        }
    }
    if (finding.verdict == Verdict::Pass)
        finding.evidence.push_back(fmt::format(
            "{} Corefile: no forward, proxy or grpc for a zone outside the cluster's: DNS to "
            "kube-dns does not recurse",
            dns.source));
    return finding;
}

}  // namespace rossoctl::verify
