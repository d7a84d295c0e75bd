#pragma once
// A verify run offline of a sandbox whose pod has one more volume, named data: its claim and the
// PersistentVolume bound to it served as given (attack 53, attack 60).
#include "verify_fixtures.hpp"

namespace rossoctl::testing::volume_fixtures {

using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

inline const std::string kClaims = "/api/v1/namespaces/team1/persistentvolumeclaims";
inline const std::string kVolumes = "/api/v1/persistentvolumes";

// The pod spec with `volume` (named data) mounted at /data.
inline json specWith(const json& volume) {
    json spec = hardenedPodSpec();
    spec["volumes"].push_back(volume);
    spec["containers"][0]["volumeMounts"].push_back({{"name", "data"}, {"mountPath", "/data"}});
    return spec;
}

inline json ephemeral(const json& claimSpec) {
    return {{"name", "data"}, {"ephemeral", {{"volumeClaimTemplate", {{"spec", claimSpec}}}}}};
}

// The claim orders-data the ephemeral volume controller made for the pod, bound to `pv`.
inline json boundClaim(const std::string& pv, const std::string& podUid = "pod-uid-1") {
    return {{"metadata",
             {{"name", "orders-data"},
              {"uid", "claim-uid"},
              {"creationTimestamp", "2023-11-14T22:00:01Z"},
              {"ownerReferences", {{{"kind", "Pod"}, {"name", "orders"}, {"uid", podUid}}}}}},
            {"spec", {{"volumeName", pv}}},
            {"status", {{"phase", "Bound"}}}};
}

inline json persistentVolume(const std::string& name, const std::string& policy,
                             const json& source) {
    json pv = {{"metadata", {{"name", name}, {"creationTimestamp", "2023-11-14T21:00:00Z"}}},
               {"spec",
                {{"persistentVolumeReclaimPolicy", policy},
                 {"claimRef", {{"name", "orders-data"}, {"uid", "claim-uid"}}}}}};
    for (const auto& [key, value] : source.items()) pv["spec"][key] = value;
    return pv;
}

// A class whose reclaimPolicy says Delete and that provisions nothing: static PVs only.
inline json staticClass() {
    return json::parse(R"({"metadata": {"name": "atk53-static"},
        "provisioner": "kubernetes.io/no-provisioner", "reclaimPolicy": "Delete"})");
}

inline json dynamicClass() {
    return json::parse(R"({"metadata": {"name": "fast"}, "provisioner": "csi.example.com",
        "reclaimPolicy": "Delete"})");
}

struct VolumeRun {
    int exitCode = 0;
    json checks;
    std::string text;
};

// verify of a sandbox whose pod (and template and replacement) have `volume`; the claim and PV
// served as given (null: not served).
// others: more pods of the namespace, listed beside the sandbox's.
inline VolumeRun runWith(const json& volume, const json& claim, const json& pv,
                         const json& storageClass, int pvStatus = 200,
                         const std::vector<json>& others = {}) {
    TestHost host;
    json box = sandbox();
    box["spec"]["podTemplate"]["spec"] = specWith(volume);
    json pod = hardenedPod("pod-uid-1"), next = hardenedPod("pod-uid-2");
    // The pods as the API server stores them: it defaults the claim's volumeMode.
    json stored = volume;
    if (stored.contains("ephemeral"))
        stored["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] = "Filesystem";
    pod["spec"] = next["spec"] = specWith(stored);
    pod["spec"]["nodeName"] = next["spec"]["nodeName"] = "node-1";  // as a running pod's
    host.server.onJson("GET", "/apis/storage.k8s.io/v1/storageclasses", 200,
                       verify_fixtures::list({storageClass}));
    if (claim.is_object()) {
        const std::string name = claim["metadata"]["name"].get<std::string>();
        // The replacement pod's claim is a new one, made for it (an ephemeral volume's).
        json again = claim;
        if (volume.contains("ephemeral"))
            again["metadata"]["ownerReferences"][0]["uid"] = "pod-uid-2";
        host.server.onJson("GET", kClaims + "/" + name, 200, claim);
        host.server.onJson("GET", kClaims + "/" + name, 200, again);
    }
    if (pv.is_object()) {
        const std::string path = kVolumes + "/" + pv["metadata"]["name"].get<std::string>();
        if (pvStatus == 200)
            host.server.onJson("GET", path, 200, pv);
        else
            host.server.on("GET", path, pvStatus,
                           statusBody(pvStatus, "Forbidden",
                                      "persistentvolumes is forbidden: cluster-scoped"));
    }
    serveHardened(host, "curl", box, pod, next, nullptr, others);
    VolumeRun run;
    run.exitCode = runVerifyJson(host);
    run.text = host.out.str() + host.err.str();
    run.checks = verdicts(testing::printedJson(host.out.str()));
    return run;
}

inline json selectorClaim(const std::string& label) {
    return {{"storageClassName", "atk53-static"},
            {"selector", {{"matchLabels", {{"atk53", label}}}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"resources", {{"requests", {{"storage", "1Mi"}}}}}};
}

// The claim spec of a class that provisions a CSI volume for each claim, and that volume.
inline json provisionedClaimSpec() {
    json claimSpec = selectorClaim("data");
    claimSpec.erase("selector");
    claimSpec["storageClassName"] = "fast";
    return claimSpec;
}

inline json provisionedVolume() {
    json pv = persistentVolume("pv-1", "Delete",
                               {{"csi", {{"driver", "csi.example.com"}, {"volumeHandle", "h1"}}}});
    pv["metadata"]["creationTimestamp"] = "2023-11-14T22:00:02Z";
    pv["metadata"]["annotations"] = {{"pv.kubernetes.io/provisioned-by", "csi.example.com"}};
    return pv;
}

}  // namespace rossoctl::testing::volume_fixtures
