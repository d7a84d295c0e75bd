// Reads for the checks of issue 35; see sandbox_inputs.hpp.
#include "sandbox_inputs.hpp"

#include <fmt/format.h>

#include "json_access.hpp"
#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::verify {

using nlohmann::json;

json optionalList(kube::Client& client, const kube::ResourceRef& ref, const std::string& ns,
                  std::vector<std::string>& problems, const kube::ListOptions& options) {
    try {
        return client.list(ref, ns, options).value("items", json::array());
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound())
            problems.push_back(fmt::format("could not list {}: {}", ref.resource, error.what()));
        return nullptr;
    }
}

namespace {

// A pod names as many Secrets and ConfigMaps as its spec holds, each up to 1 MiB: verify reads
// at most kMostSources of them, and kMostSourceBytes; the rest is unproven, never passed.
constexpr size_t kMostSourceBytes = 32 * 1024 * 1024;

size_t dataBytes(const json& object) {
    size_t bytes = 0;
    for (const char* field : {"data", "binaryData"})
        if (object.contains(field) && object[field].is_object())
            for (const auto& [key, value] : object[field].items())
                bytes += key.size() +
                         (value.is_string() ? value.get_ref<const std::string&>().size() : 0);
    return bytes;
}

}  // namespace

void readCredentialSources(kube::Client& client, const std::string& ns, const json& pod,
                           std::vector<CredentialSource>& sources) {
    size_t bytes = 0, read = 0;
    for (const auto& source : sources)
        if (source.object) {
            bytes += dataBytes(*source.object);
            ++read;
        }
    for (const auto& [kind, name] : referencedSources(pod)) {
        bool known = false;
        for (const auto& source : sources)
            known = known || (source.kind == kind && source.name == name);
        if (known) continue;
        CredentialSource source{kind, name, std::nullopt, ""};
        if (read >= kMostCredentialSources || bytes >= kMostSourceBytes) {
            source.problem = kSourceOverBudget;
            sources.push_back(std::move(source));
            continue;
        }
        try {
            ++read;
            source.object = client.getIfExists(
                kind == "secret" ? kube::resources::secrets() : kube::resources::configMaps(), ns,
                name);
            if (!source.object)
                source.problem = "not found";
            else
                bytes += dataBytes(*source.object);
        } catch (const kube::ApiError& error) {
            source.problem = error.what();
        }
        sources.push_back(std::move(source));
    }
}

std::optional<std::string> readClientAuthorities(kube::Client& client) {
    try {
        const auto published = client.getIfExists(kube::resources::configMaps(), "kube-system",
                                                  "extension-apiserver-authentication");
        if (!published) return std::nullopt;
        const json data = published->value("data", json::object());
        if (!data.is_object()) return std::nullopt;
        std::string authorities;
        for (const char* key : {"client-ca-file", "requestheader-client-ca-file"})
            if (data.contains(key) && data[key].is_string())
                authorities += data[key].get<std::string>() + "\n";
        return authorities;
    } catch (const kube::ApiError&) {
        return std::nullopt;
    }
}

std::optional<std::vector<json>> podsSelectedBy(kube::Client& client, const std::string& ns,
                                                const model::PodPeer& peer) {
    try {
        std::vector<std::string> spaces;
        const json& selector = peer.namespaceSelector;
        const json labels =
            selector.is_object() ? selector.value("matchLabels", json::object()) : json::object();
        const char* nameLabel = "kubernetes.io/metadata.name";
        if (selector.is_null()) {
            spaces.push_back(ns);
        } else if (!selector.contains("matchExpressions") && labels.size() == 1 &&
                   labels.contains(nameLabel) && labels[nameLabel].is_string()) {
            spaces.push_back(labels[nameLabel]);  // the label is the name: no list needed
        } else {
            for (const auto& item :
                 client.list(kube::resources::namespaces(), "").value("items", json::array()))
                if (model::labelSelectorMatches(selector,
                                                item["metadata"].value("labels", json::object())))
                    spaces.push_back(item["metadata"].value("name", ""));
        }
        std::vector<json> selected;
        for (const auto& space : spaces)
            for (const auto& item :
                 client.list(kube::resources::pods(), space).value("items", json::array()))
                if (model::labelSelectorMatches(peer.podSelector,
                                                item["metadata"].value("labels", json::object())))
                    selected.push_back(item);
        return selected;
    } catch (const kube::ApiError&) {
        return std::nullopt;
    }
}

std::vector<std::string> unevaluatedPolicyKinds(kube::Client& client, const std::string& ns) {
    static const kube::ResourceRef kinds[] = {
        {"policy.networking.k8s.io", "v1alpha1", "adminnetworkpolicies", "AdminNetworkPolicy",
         false},
        {"policy.networking.k8s.io", "v1alpha1", "baselineadminnetworkpolicies",
         "BaselineAdminNetworkPolicy", false},
        {"policy.networking.k8s.io", "v1alpha2", "clusternetworkpolicies", "ClusterNetworkPolicy",
         false},
        {"cilium.io", "v2", "ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy",
         false},
        {"projectcalico.org", "v3", "networkpolicies", "NetworkPolicy", true},
        {"projectcalico.org", "v3", "globalnetworkpolicies", "GlobalNetworkPolicy", false},
        {"crd.projectcalico.org", "v1", "networkpolicies", "NetworkPolicy", true},
        {"crd.projectcalico.org", "v1", "globalnetworkpolicies", "GlobalNetworkPolicy", false},
        {"crd.antrea.io", "v1beta1", "networkpolicies", "NetworkPolicy", true},
        {"crd.antrea.io", "v1beta1", "clusternetworkpolicies", "ClusterNetworkPolicy", false},
    };
    std::vector<std::string> lines;
    for (const auto& kind : kinds) {
        try {
            // A hostile server's wrong types read as absent, never an exception (review 66 L5).
            const json listed = client.list(kind, kind.namespaced ? ns : "");
            const json& items = json_access::arrayAt(listed, "items");
            if (items.empty()) continue;
            std::string names;
            for (const auto& item : items)
                names += (names.empty() ? "" : ", ") +
                         json_access::stringAt(json_access::at(item, "metadata"), "name", "?");
            lines.push_back(fmt::format("{} {} ({}) decide egress too and are not evaluated",
                                        items.size(), kind.qualifiedName(), names));
        } catch (const kube::ApiError& error) {
            if (error.isNotFound()) continue;  // not served
            lines.push_back(
                fmt::format("could not list {} ({})", kind.qualifiedName(), error.what()));
        }
    }
    return lines;
}

}  // namespace rossoctl::verify
