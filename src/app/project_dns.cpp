// Whether DNS to kube-dns is a tunnel out (issue 35 point 11): a cluster DNS that asks other
// servers for names outside the cluster's zones carries whatever a pod encodes in a name to
// whoever serves that name. Read from the API only: no query is sent to judge it.
#include "rossoctl/app/project_dns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rossoctl/kube/resource.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

const char* const kNamespace = "kube-system";

// Plugins that answer from the cluster, a file, a cache or a synthesis, or only observe.
const std::set<std::string> kAnswersLocally = {
    "acl",      "any",          "auto",       "autopath",    "azure",      "bind",     "bufsize",
    "cache",    "cancel",       "chaos",      "clouddns",    "debug",      "dns64",    "dnssec",
    "dnstap",   "erratic",      "errors",     "file",        "geoip",      "header",   "health",
    "hosts",    "k8s_external", "kubernetes", "loadbalance", "local",      "log",      "loop",
    "metadata", "minimal",      "nsid",       "pprof",       "prometheus", "ready",    "reload",
    "rewrite",  "root",         "route53",    "secondary",   "sign",       "template", "timeouts",
    "tls",      "trace",        "transfer",   "view",        "whoami"};
// Plugins that ask other servers; the first three take the zone they forward as first word.
const std::set<std::string> kAsksOthers = {"forward",   "proxy",   "grpc",    "fanout",
                                           "alternate", "unbound", "recursor"};

bool within(const std::string& name, const std::string& zone) {
    if (zone == ".") return true;
    return name == zone || (name.size() > zone.size() &&
                            name.compare(name.size() - zone.size(), zone.size(), zone) == 0 &&
                            name[name.size() - zone.size() - 1] == '.');
}

// A zone no one outside can serve names of: the root, a top-level domain and the reverse
// trees are delegated in public DNS, so they never count, whatever kubernetes claims.
bool privateZone(const std::string& zone) {
    const auto labels = std::count(zone.begin(), zone.end(), '.');
    return labels >= 2 && !within(zone, "arpa.");
}

std::vector<std::string> clusterZones(const Corefile& corefile) {
    std::vector<std::string> zones = {"cluster.local."};
    for (const auto& server : corefile.servers)
        for (const auto& directive : server.directives) {
            if (directive.front() != "kubernetes") continue;
            if (directive.size() == 1)
                zones.insert(zones.end(), server.zones.begin(), server.zones.end());
            for (size_t i = 1; i < directive.size(); ++i)
                zones.push_back(corefileZone(directive[i]));
        }
    std::erase_if(zones, [](const std::string& zone) { return !privateZone(zone); });
    // Each once: the default's and the kubernetes plugin's cluster.local. are one zone.
    std::vector<std::string> once;
    for (auto& zone : zones)
        if (std::find(once.begin(), once.end(), zone) == once.end())
            once.push_back(std::move(zone));
    return once;
}

// The zones a directive that asks others gets names of: its FROM zone within the block's, or
// any name once the block rewrites names.
std::vector<std::string> askedZones(const CorefileServer& server,
                                    const std::vector<std::string>& directive, bool rewrites) {
    if (rewrites) return {"."};
    const bool hasFrom =
        directive.size() > 1 && (directive.front() == "forward" || directive.front() == "proxy" ||
                                 directive.front() == "grpc");
    if (!hasFrom) return server.zones;
    const std::string from = corefileZone(directive[1]);
    std::vector<std::string> zones;
    for (const auto& zone : server.zones) {
        if (within(from, zone))
            zones.push_back(from);
        else if (within(zone, from))
            zones.push_back(zone);
    }
    return zones;
}

std::string joinedWords(const std::vector<std::string>& words, const char* separator = " ") {
    std::string line;
    for (const auto& word : words) line += (line.empty() ? "" : separator) + word;
    return line;
}

std::string labelSelector(const json& selector) {
    std::string text;
    for (const auto& [key, value] : selector.items())
        text += (text.empty() ? "" : ",") + key + "=" + value.get<std::string>();
    return text;
}

// "-conf PATH" or "-conf=PATH" among a container's command and args.
std::string confPath(const json& container) {
    std::vector<std::string> words;
    for (const char* field : {"command", "args"})
        for (const auto& word : container.value(field, json::array()))
            if (word.is_string()) words.push_back(word);
    for (size_t i = 0; i < words.size(); ++i) {
        for (const char* flag : {"-conf", "--conf"}) {
            if (words[i] == flag && i + 1 < words.size()) return words[i + 1];
            if (words[i].rfind(std::string(flag) + "=", 0) == 0)
                return words[i].substr(std::string(flag).size() + 1);
        }
    }
    return "";
}

// The files a DNS pod's containers see from its ConfigMap volumes, by path.
void readMounts(kube::Client& client, const json& pod, ClusterDns& dns) {
    std::map<std::string, json> volumes;
    for (const auto& volume : pod.value("spec", json::object()).value("volumes", json::array()))
        if (volume.contains("configMap")) volumes[volume.value("name", "")] = volume["configMap"];
    for (const auto& container :
         pod.value("spec", json::object()).value("containers", json::array())) {
        if (dns.corefilePath.empty()) dns.corefilePath = confPath(container);
        for (const auto& mount : container.value("volumeMounts", json::array())) {
            const auto volume = volumes.find(mount.value("name", ""));
            if (volume == volumes.end()) continue;
            const std::string configMapName = volume->second.value("name", "");
            const auto map =
                client.getIfExists(kube::resources::configMaps(), kNamespace, configMapName);
            const json data = map ? map->value("data", json::object()) : json::object();
            const std::string at = mount.value("mountPath", "");
            if (const std::string subPath = mount.value("subPath", ""); !subPath.empty()) {
                if (data.contains(subPath) && data[subPath].is_string())
                    dns.mountedFiles[at] = data[subPath];
                continue;
            }
            dns.mountedDirectories.push_back(at);
            std::map<std::string, std::string> paths;  // key -> path under the mount
            if (volume->second.contains("items"))
                for (const auto& item : volume->second["items"])
                    paths[item.value("key", "")] = item.value("path", "");
            else
                for (const auto& [key, value] : data.items()) paths[key] = key;
            for (const auto& [key, path] : paths)
                if (data.contains(key) && data[key].is_string())
                    dns.mountedFiles[at + "/" + path] = data[key];
            dns.mountedSources[at] = configMapName;
        }
    }
}

// The Service's cluster IPs and its pods (IPs, labels, mounted ConfigMaps).
void readEndpoints(kube::Client& client, ClusterDns& dns) {
    try {
        const auto service =
            client.getIfExists(kube::resources::services(), kNamespace, "kube-dns");
        if (!service) {
            dns.endpointsProblem = "Service kube-system/kube-dns not found";
            return;
        }
        const json spec = service->value("spec", json::object());
        json clusterIps = spec.value("clusterIPs", json::array());
        if (clusterIps.empty() && spec.contains("clusterIP"))
            clusterIps.push_back(spec["clusterIP"]);
        for (const auto& ip : clusterIps)
            if (ip.is_string() && ip != "None" && ip != "") dns.addresses.push_back(ip);
        const json selector = spec.value("selector", json::object());
        if (selector.empty()) {
            dns.endpointsProblem = "Service kube-system/kube-dns has no selector";
            return;
        }
        kube::ListOptions options;
        options.labelSelector = labelSelector(selector);
        const json pods = client.list(kube::resources::pods(), kNamespace, options);
        for (const auto& pod : pods.value("items", json::array())) {
            const json metadata = pod.value("metadata", json::object());
            dns.podLabels.push_back(metadata.value("labels", json::object()));
            const json status = pod.value("status", json::object());
            for (const auto& ip : status.value("podIPs", json::array()))
                if (ip.contains("ip") && ip["ip"].is_string()) dns.addresses.push_back(ip["ip"]);
            if (status.contains("podIP") && status["podIP"].is_string())
                dns.addresses.push_back(status["podIP"]);
            readMounts(client, pod, dns);
        }
        if (const auto ns = client.getIfExists(kube::resources::namespaces(), "", kNamespace))
            dns.namespaceLabels =
                ns->value("metadata", json::object()).value("labels", dns.namespaceLabels);
    } catch (const std::exception& error) {
        dns.endpointsProblem =
            fmt::format("kube-system/kube-dns could not be read ({})", error.what());
    }
    std::sort(dns.addresses.begin(), dns.addresses.end());
    dns.addresses.erase(std::unique(dns.addresses.begin(), dns.addresses.end()),
                        dns.addresses.end());
}

}  // namespace

ClusterDns readClusterDns(kube::Client& client) {
    ClusterDns dns;
    readEndpoints(client, dns);
    // What the DNS pods read at -conf runs; kube-system/coredns (kubeadm's) when not seen.
    if (const auto file = dns.mountedFiles.find(dns.corefilePath); file != dns.mountedFiles.end()) {
        const std::string directory = dns.corefilePath.substr(0, dns.corefilePath.rfind('/'));
        const auto source = dns.mountedSources.find(directory);
        dns.source =
            fmt::format("{}/{}", kNamespace,
                        source == dns.mountedSources.end() ? dns.corefilePath : source->second);
        dns.corefile = file->second;
        return dns;
    }
    if (!dns.corefilePath.empty()) {
        dns.problem = fmt::format("the DNS pods read {}, which is not in a ConfigMap they mount",
                                  dns.corefilePath);
        return dns;
    }
    try {
        const auto map = client.getIfExists(kube::resources::configMaps(), kNamespace, "coredns");
        const json data = map ? map->value("data", json::object()) : json::object();
        if (!map)
            dns.problem =
                "not found (the cluster DNS is not a CoreDNS whose configuration "
                "verify reads)";
        else if (!data.contains("Corefile") || !data["Corefile"].is_string())
            dns.problem = "has no key Corefile";
        else
            dns.corefile = data["Corefile"].get<std::string>();
    } catch (const std::exception& error) {
        dns.problem = fmt::format("could not be read ({})", error.what());
    }
    return dns;
}

DnsAssessment assessClusterDns(const ClusterDns& dns) {
    if (!dns.corefile)
        return {DnsRecursion::Unknown,
                {fmt::format("{}: {}: whether DNS to kube-dns resolves outside names (a tunnel "
                             "out) is not known",
                             dns.source, dns.problem)},
                fmt::format("{}: {}", dns.source, dns.problem)};
    std::string problem;
    const std::string directory = dns.corefilePath.substr(0, dns.corefilePath.rfind('/'));
    const auto corefile =
        parseCorefile(*dns.corefile, &problem,
                      {&dns.mountedFiles, &dns.mountedDirectories,
                       dns.corefilePath.find('/') == std::string::npos ? "" : directory});
    if (!corefile)
        return {DnsRecursion::Unknown,
                {fmt::format("{} Corefile not understood ({}): whether DNS to kube-dns resolves "
                             "outside names is not known",
                             dns.source, problem)},
                fmt::format("{} Corefile not understood: {}", dns.source, problem)};
    const auto cluster = clusterZones(*corefile);
    auto isCluster = [&](const std::string& zone) {
        return std::any_of(cluster.begin(), cluster.end(),
                           [&](const std::string& own) { return within(zone, own); });
    };
    DnsAssessment recurses{DnsRecursion::Recurses, {}, ""};
    DnsAssessment unknown{DnsRecursion::Unknown, {}, ""};
    for (const auto& server : corefile->servers) {
        const bool rewrites =
            std::any_of(server.directives.begin(), server.directives.end(),
                        [](const auto& directive) { return directive.front() == "rewrite"; });
        const std::string block = joinedWords(server.zones, ", ");
        for (const auto& directive : server.directives) {
            const std::string& plugin = directive.front();
            if (kAsksOthers.count(plugin)) {
                const auto zones = askedZones(server, directive, rewrites);
                const auto outside = std::find_if_not(zones.begin(), zones.end(), isCluster);
                if (outside == zones.end()) continue;
                if (recurses.summary.empty())
                    recurses.summary = fmt::format("{}: {}", dns.source, joinedWords(directive));
                recurses.evidence.push_back(fmt::format(
                    "{} Corefile, block {}: {}{}: DNS to kube-dns resolves outside names (a "
                    "tunnel out)",
                    dns.source, block, joinedWords(directive),
                    rewrites && *outside == "." ? " after a rewrite (any name may reach it)" : ""));
            } else if (!kAnswersLocally.count(plugin)) {
                if (unknown.summary.empty())
                    unknown.summary = fmt::format("{}: plugin {} not known", dns.source, plugin);
                unknown.evidence.push_back(fmt::format(
                    "{} Corefile, block {}: plugin {} is not one known to answer without asking "
                    "other servers: whether DNS to kube-dns resolves outside names is not known",
                    dns.source, block, plugin));
            }
        }
    }
    for (const auto& import : corefile->fileImports) {
        if (unknown.summary.empty())
            unknown.summary = fmt::format("{}: {} not readable", dns.source, import);
        unknown.evidence.push_back(fmt::format(
            "{} Corefile: {}: a file not in the ConfigMap, so what it adds (a forward?) is not "
            "known",
            dns.source, import));
    }
    if (!recurses.evidence.empty()) return recurses;
    if (!unknown.evidence.empty()) return unknown;
    return {DnsRecursion::Closed,
            {fmt::format("{} Corefile: no plugin asks other servers for a name outside the "
                         "cluster's zones ({}): DNS to kube-dns does not recurse",
                         dns.source, joinedWords(cluster, ", "))},
            ""};
}

}  // namespace rossoctl::app
