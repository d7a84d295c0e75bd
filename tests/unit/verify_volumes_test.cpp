// Attack 53's volume false passes, offline: a generic ephemeral volume (or a claim) whose
// PersistentVolume Retains, or is the node's /etc, or may hold a kubeconfig someone put there.
// Each of these passed before verify read the claim and the PersistentVolume bound to it.
#include <catch2/catch.hpp>

#include "volume_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using namespace rossoctl::testing::volume_fixtures;

TEST_CASE("attack 53 F5: an ephemeral volume bound by selector to a PV that Retains survives",
          "[verify][attack53]") {
    const VolumeRun run = runWith(
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
        const VolumeRun run = runWith(ephemeral(claimSpec), boundClaim("pv-1"),
                                      persistentVolume("pv-1", "Recycle", csi), dynamicClass());
        CHECK(run.checks["nothing-survives"]["result"] == "fail");
        CHECK(contains(run.checks["nothing-survives"].dump(), "with reclaimPolicy Recycle"));
    }
    SECTION("a PV that may not be read") {
        const VolumeRun run = runWith(ephemeral(claimSpec), boundClaim("pv-1"),
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
        const VolumeRun run = runWith(ephemeral(claimSpec), claim, nullptr, dynamicClass());
        CHECK(run.checks["host-isolation"]["result"] == "unproven");
        CHECK(contains(run.checks["host-isolation"].dump(),
                       "is not bound to a PersistentVolume yet"));
    }
    SECTION("a PV provisioned for the claim and deleted with it: every check passes") {
        json pv = persistentVolume("pv-1", "Delete", csi);
        pv["metadata"]["creationTimestamp"] = "2023-11-14T22:00:02Z";
        pv["metadata"]["annotations"] = {{"pv.kubernetes.io/provisioned-by", "csi.example.com"}};
        const VolumeRun run = runWith(ephemeral(claimSpec), boundClaim("pv-1"), pv, dynamicClass());
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
        const VolumeRun run =
            runWith(ephemeral(claimSpec), boundClaim("atk53-host-1"),
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
        const VolumeRun run =
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
        const VolumeRun run =
            runWith(ephemeral(selectorClaim("data")), boundClaim("atk53-data-1"),
                    persistentVolume("atk53-data-1", "Retain", data), staticClass());
        const std::string evidence = run.checks["service-account-token"].dump();
        INFO(evidence);
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(evidence,
                       "volume data is claim orders-data, not provisioned empty for "
                       "this pod (or not known to be): what it holds is not read"));
    }
    SECTION("a network filesystem") {
        const VolumeRun run =
            runWith({{"name", "data"}, {"nfs", {{"server", "nfs.example"}, {"path", "/exports"}}}},
                    nullptr, nullptr, staticClass());
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(run.checks["service-account-token"].dump(),
                       "volume data is nfs: what it holds is not read"));
    }
}
