#pragma once
// The cluster DNS a project's pods may ask (Service kube-system/kube-dns, CoreDNS): where pods
// reach it and whether it recurses to the outside, which makes DNS a tunnel out (issue 35
// point 11). `project create` warns about it; `sandbox verify` fails egress on it.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

struct ClusterDns {
    std::string source = "kube-system/coredns";  // the ConfigMap the Corefile came from
    std::optional<std::string> corefile;         // nullopt: not read (problem says why)
    std::string problem;
    // Where pods reach it: the Service's cluster IPs and its pods' IPs; their labels and the
    // namespace's (defaults: k8s-app=kube-dns in kube-system, what allow-dns selects).
    std::vector<std::string> addresses;
    std::vector<nlohmann::json> podLabels = {{{"k8s-app", "kube-dns"}}};
    nlohmann::json namespaceLabels = {{"kubernetes.io/metadata.name", "kube-system"}};
    std::string endpointsProblem;  // not empty: addresses not (all) read, says why
    // What the DNS pods mount from ConfigMaps: each file by path, the directories mounted,
    // and the Corefile's path (-conf), so imports of mounted files are read, not guessed.
    std::map<std::string, std::string> mountedFiles;
    std::vector<std::string> mountedDirectories;
    std::map<std::string, std::string> mountedSources;  // directory -> ConfigMap name
    std::string corefilePath;
};

// The kube-dns Service, its pods, and the Corefile of the ConfigMap those pods mount
// (kube-system/coredns when they cannot be read); API errors become problems, never throws.
ClusterDns readClusterDns(kube::Client& client);

// One server block: its zones ("." for the root, each with a trailing dot) and its top-level
// directives, each as words (a directive's own sub-block is left out), snippets imported.
struct CorefileServer {
    std::vector<std::string> zones;
    std::vector<std::vector<std::string>> directives;
};
struct Corefile {
    std::vector<CorefileServer> servers;
    std::vector<std::string> fileImports;  // "import PATH" of a file not in the text
};
// ".:53", "dns://.:53", "Cluster.Local" -> ".", ".", "cluster.local."
std::string corefileZone(std::string key);
// Files an import may name: mounted (path -> text) under the directories mounted; relative
// paths are from the Corefile's directory. A file outside them stays in fileImports.
struct CorefileFiles {
    const std::map<std::string, std::string>* files = nullptr;
    const std::vector<std::string>* directories = nullptr;
    std::string corefileDirectory;
};
// nullopt (problem says why) when the text is not understood: braces that do not balance, a
// block with no key, environment placeholders, snippets or files that import in a loop.
std::optional<Corefile> parseCorefile(const std::string& text, std::string* problem = nullptr,
                                      const CorefileFiles& files = {});

enum class DnsRecursion { Closed, Recurses, Unknown };
struct DnsAssessment {
    DnsRecursion recursion = DnsRecursion::Unknown;
    std::vector<std::string> evidence;
    std::string summary;  // the first reason in a few words: "kube-system/coredns: forward . X"
};
// Recurses: a plugin that asks other servers (forward, proxy, grpc, …) may get a name outside
// the cluster's zones; Unknown: not read, not understood, a plugin or import not known.
DnsAssessment assessClusterDns(const ClusterDns& dns);

}  // namespace rossoctl::app
