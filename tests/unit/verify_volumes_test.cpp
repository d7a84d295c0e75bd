// Attack 53's volume false passes, offline: a generic ephemeral volume (or a claim) whose
// PersistentVolume Retains, or is the node's /etc, or may hold a kubeconfig someone put there.
// Each of these passed before verify read the claim and the PersistentVolume bound to it.
#include <catch2/catch.hpp>

#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

namespace {

const std::string kClaims = "/api/v1/namespaces/team1/persistentvolumeclaims";
const std::string kVolumes = "/api/v1/persistentvolumes";

// The pod spec with `volume` (named data) mounted at /data.
json specWith(const json& volume) {
    json spec = hardenedPodSpec();
    spec["volumes"].push_back(volume);
    spec["containers"][0]["volumeMounts"].push_back({{"name", "data"}, {"mountPath", "/data"}});
    return spec;
}

json ephemeral(const json& claimSpec) {
    return {{"name", "data"}, {"ephemeral", {{"volumeClaimTemplate", {{"spec", claimSpec}}}}}};
}

// The claim orders-data the ephemeral volume controller made for the pod, bound to `pv`.
json boundClaim(const std::string& pv, const std::string& podUid = "pod-uid-1") {
    return {{"metadata",
             {{"name", "orders-data"},
              {"uid", "claim-uid"},
              {"creationTimestamp", "2023-11-14T22:00:01Z"},
              {"ownerReferences", {{{"kind", "Pod"}, {"name", "orders"}, {"uid", podUid}}}}}},
            {"spec", {{"volumeName", pv}}},
            {"status", {{"phase", "Bound"}}}};
}

json persistentVolume(const std::string& name, const std::string& policy, const json& source) {
    json pv = {{"metadata", {{"name", name}, {"creationTimestamp", "2023-11-14T21:00:00Z"}}},
               {"spec",
                {{"persistentVolumeReclaimPolicy", policy},
                 {"claimRef", {{"name", "orders-data"}, {"uid", "claim-uid"}}}}}};
    for (const auto& [key, value] : source.items()) pv["spec"][key] = value;
    return pv;
}

// A class whose reclaimPolicy says Delete and that provisions nothing: static PVs only.
json staticClass() {
    return json::parse(R"({"metadata": {"name": "atk53-static"},
        "provisioner": "kubernetes.io/no-provisioner", "reclaimPolicy": "Delete"})");
}

json dynamicClass() {
    return json::parse(R"({"metadata": {"name": "fast"}, "provisioner": "csi.example.com",
        "reclaimPolicy": "Delete"})");
}

struct Run {
    int exitCode = 0;
    json checks;
    std::string text;
};

// verify of a sandbox whose pod (and template and replacement) have `volume`; the claim and PV
// served as given (null: not served).
Run runWith(const json& volume, const json& claim, const json& pv, const json& storageClass,
            int pvStatus = 200) {
    TestHost host;
    json box = sandbox();
    box["spec"]["podTemplate"]["spec"] = specWith(volume);
    json pod = hardenedPod("pod-uid-1"), next = hardenedPod("pod-uid-2");
    // The pods as the API server stores them: it defaults the claim's volumeMode.
    json stored = volume;
    if (stored.contains("ephemeral"))
        stored["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] = "Filesystem";
    pod["spec"] = next["spec"] = specWith(stored);
    host.server.onJson("GET", "/apis/storage.k8s.io/v1/storageclasses", 200, list({storageClass}));
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
    serveHardened(host, "curl", box, pod, next);
    Run run;
    run.exitCode = runVerifyJson(host);
    run.text = host.out.str() + host.err.str();
    run.checks = verdicts(testing::printedJson(host.out.str()));
    return run;
}

json selectorClaim(const std::string& label) {
    return {{"storageClassName", "atk53-static"},
            {"selector", {{"matchLabels", {{"atk53", label}}}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"resources", {{"requests", {{"storage", "1Mi"}}}}}};
}

}  // namespace

TEST_CASE("attack 53 F5: an ephemeral volume bound by selector to a PV that Retains survives",
          "[verify][attack53]") {
    const Run run = runWith(
        ephemeral(selectorClaim("data")), boundClaim("atk53-data-1"),
        persistentVolume("atk53-data-1", "Retain", {{"hostPath", {{"path", "/srv/pvdata"}}}}),
        staticClass());
    const std::string evidence = run.checks["nothing-survives"].dump();
    INFO(evidence);
    CHECK(run.exitCode == 3);
    CHECK(run.checks["nothing-survives"]["result"] == "fail");
    CHECK(contains(evidence,
                   "volume data is a generic ephemeral volume: claim orders-data is "
                   "bound to PersistentVolume atk53-data-1 with reclaimPolicy Retain"));
    // The template's next claim binds by selector: whichever PV it picks decides.
    CHECK(contains(evidence, "its claim has a selector"));
}

TEST_CASE("attack 53 F5: the PV's own reclaim policy decides; an unreadable PV proves nothing",
          "[verify][attack53]") {
    json claimSpec = selectorClaim("data");
    claimSpec.erase("selector");
    claimSpec["storageClassName"] = "fast";
    const json csi = {{"csi", {{"driver", "csi.example.com"}, {"volumeHandle", "h1"}}}};
    SECTION("Recycle keeps the data too") {
        const Run run = runWith(ephemeral(claimSpec), boundClaim("pv-1"),
                                persistentVolume("pv-1", "Recycle", csi), dynamicClass());
        CHECK(run.checks["nothing-survives"]["result"] == "fail");
        CHECK(contains(run.checks["nothing-survives"].dump(), "with reclaimPolicy Recycle"));
    }
    SECTION("a PV that may not be read") {
        const Run run = runWith(ephemeral(claimSpec), boundClaim("pv-1"),
                                persistentVolume("pv-1", "Delete", csi), dynamicClass(), 403);
        const std::string evidence = run.checks["nothing-survives"].dump();
        INFO(evidence);
        CHECK(run.checks["nothing-survives"]["result"] == "unproven");
        CHECK(contains(evidence, "its PersistentVolume pv-1 could not be read"));
        CHECK(run.checks["host-isolation"]["result"] == "unproven");
    }
    SECTION("a claim not bound yet") {
        json claim = boundClaim("");
        claim["status"]["phase"] = "Pending";
        const Run run = runWith(ephemeral(claimSpec), claim, nullptr, dynamicClass());
        CHECK(run.checks["host-isolation"]["result"] == "unproven");
        CHECK(contains(run.checks["host-isolation"].dump(),
                       "is not bound to a PersistentVolume yet"));
    }
    SECTION("a PV provisioned for the claim and deleted with it: every check passes") {
        json pv = persistentVolume("pv-1", "Delete", csi);
        pv["metadata"]["creationTimestamp"] = "2023-11-14T22:00:02Z";
        pv["metadata"]["annotations"] = {{"pv.kubernetes.io/provisioned-by", "csi.example.com"}};
        const Run run = runWith(ephemeral(claimSpec), boundClaim("pv-1"), pv, dynamicClass());
        INFO(run.text);
        CHECK(run.checks["nothing-survives"]["result"] == "pass");
        CHECK(run.checks["host-isolation"]["result"] == "pass");
        CHECK(run.checks["service-account-token"]["result"] == "pass");
        CHECK(contains(run.checks["service-account-token"].dump(),
                       "volume data was provisioned empty for this pod (claim orders-data)"));
    }
}

TEST_CASE("attack 53 F6: a claim bound to a hostPath PV of the node's /etc is a way to the host",
          "[verify][attack53]") {
    json claimSpec = selectorClaim("host");
    claimSpec["accessModes"] = {"ReadOnlyMany"};
    const json etc = {{"hostPath", {{"path", "/etc"}, {"type", "Directory"}}}};
    SECTION("a generic ephemeral volume") {
        const Run run = runWith(ephemeral(claimSpec), boundClaim("atk53-host-1"),
                                persistentVolume("atk53-host-1", "Retain", etc), staticClass());
        const std::string evidence = run.checks["host-isolation"].dump();
        INFO(evidence);
        CHECK(run.checks["host-isolation"]["result"] == "fail");
        CHECK(contains(evidence,
                       "volume data (claim orders-data) is PersistentVolume "
                       "atk53-host-1, hostPath /etc (the node's filesystem)"));
    }
    SECTION("a plain claim, and a local PV") {
        json claim = boundClaim("node-disk");
        claim["metadata"]["name"] = "shared";
        const json local = {{"local", {{"path", "/mnt/disks/ssd1"}}}};
        const Run run =
            runWith({{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "shared"}}}}, claim,
                    persistentVolume("node-disk", "Retain", local), staticClass());
        CHECK(run.checks["host-isolation"]["result"] == "fail");
        CHECK(contains(run.checks["host-isolation"].dump(),
                       "PersistentVolume node-disk, local /mnt/disks/ssd1"));
    }
}

TEST_CASE("attack 53 F6b: a volume verify cannot read may hold a kubeconfig: token unproven",
          "[verify][attack53]") {
    const json data = {{"hostPath", {{"path", "/srv/pvdata"}}}};
    SECTION("an ephemeral volume on a hand-made PV") {
        const Run run = runWith(ephemeral(selectorClaim("data")), boundClaim("atk53-data-1"),
                                persistentVolume("atk53-data-1", "Retain", data), staticClass());
        const std::string evidence = run.checks["service-account-token"].dump();
        INFO(evidence);
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(evidence,
                       "volume data is claim orders-data, not provisioned empty for "
                       "this pod (or not known to be): what it holds is not read"));
    }
    SECTION("a network filesystem") {
        const Run run =
            runWith({{"name", "data"}, {"nfs", {{"server", "nfs.example"}, {"path", "/exports"}}}},
                    nullptr, nullptr, staticClass());
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(run.checks["service-account-token"].dump(),
                       "volume data is nfs: what it holds is not read"));
    }
}
