// Attack 60's volume false passes, offline: a pod of the namespace that mounts the sandbox pod's
// claim by name (S1: the agent's data leaves through it, a token comes in, what it writes is
// kept), and a claim filled from a data source, which starts with what that source holds (S2).
#include <catch2/catch.hpp>

#include "rossoctl/verify/volume_claims.hpp"
#include "volume_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using namespace rossoctl::testing::volume_fixtures;
namespace verify_fixtures = rossoctl::testing::verify_fixtures;

namespace {

// A pod of the namespace that mounts `claim` by name (attack 60 S1's relay).
json claimMounter(const std::string& name, const std::string& claim,
                  const std::string& phase = "Running") {
    return {
        {"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "uid-" + name}}},
        {"spec",
         {{"containers",
           {{{"name", "relay"},
             {"image", "curlimages/curl:8"},
             // Without NET_RAW: what it shares is its claim alone (attack 65 N2 aside).
             {"securityContext",
              {{"runAsNonRoot", true},
               {"allowPrivilegeEscalation", false},
               {"capabilities", {{"drop", {"ALL"}}}}}}}}},
          {"volumes", {{{"name", "stolen"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}}},
        {"status", {{"phase", phase}}}};
}

}  // namespace

TEST_CASE("attack 60 S1: a pod of the namespace that mounts the sandbox pod's claim shares it",
          "[verify][attack60]") {
    const json volume = ephemeral(provisionedClaimSpec());
    SECTION("a running relay: egress and nothing survives fail, the token is unproven") {
        const VolumeRun run = runWith(volume, boundClaim("pv-1"), provisionedVolume(),
                                      dynamicClass(), 200, {claimMounter("relay", "orders-data")});
        INFO(run.text);
        CHECK(run.exitCode == 3);
        CHECK(run.checks["egress"]["static"]["result"] == "fail");
        CHECK(contains(run.checks["egress"].dump(),
                       "pod team1/relay mounts claim orders-data of this pod: what the agent "
                       "writes there leaves through it"));
        CHECK(run.checks["nothing-survives"]["result"] == "fail");
        CHECK(contains(run.checks["nothing-survives"].dump(),
                       "pod team1/relay mounts claim orders-data of this pod: it keeps what the "
                       "agent writes there, past the pod"));
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(run.checks["service-account-token"].dump(),
                       "pod team1/relay mounts claim orders-data of this pod: it may write a "
                       "credential there, which verify does not read"));
    }
    SECTION("a pod that ended runs nothing; one mounting another claim shares nothing") {
        const VolumeRun run = runWith(
            volume, boundClaim("pv-1"), provisionedVolume(), dynamicClass(), 200,
            {claimMounter("done", "orders-data", "Succeeded"),
             claimMounter("crashed", "orders-data", "Failed"), claimMounter("other", "keep")});
        INFO(run.text);
        // This pod has no egress gate: its egress is unproven whatever shares its claim.
        CHECK(run.checks["egress"]["result"] == "unproven");
        CHECK_FALSE(contains(run.checks["egress"].dump(), "mounts claim"));
        CHECK(run.checks["nothing-survives"]["static"]["result"] == "pass");
        CHECK(run.checks["service-account-token"]["result"] == "pass");
    }
    SECTION("six relays, a pending one among them: four named") {
        std::vector<json> relays;
        for (int i = 1; i <= 6; ++i)
            relays.push_back(claimMounter("relay-" + std::to_string(i), "orders-data",
                                          i == 6 ? "Pending" : "Running"));
        const VolumeRun run =
            runWith(volume, boundClaim("pv-1"), provisionedVolume(), dynamicClass(), 200, relays);
        CHECK(run.checks["egress"]["result"] == "fail");
        CHECK(contains(run.checks["egress"].dump(),
                       "pods team1/relay-1, team1/relay-2, team1/relay-3, team1/relay-4 and 2 "
                       "more mount claim orders-data of this pod: what the agent writes there "
                       "leaves through them"));
    }
}

TEST_CASE("attack 60 S1: who shares a claim, from hostile or unread pod lists",
          "[verify][attack60]") {
    json pod = hardenedPod("pod-uid-1");
    pod["spec"]["volumes"].push_back(ephemeral(provisionedClaimSpec()));
    using verify::CheckKind;
    SECTION("the namespace's pods not read: unproven for a pod with a claim, pass without") {
        for (const auto kind :
             {CheckKind::Egress, CheckKind::ServiceAccountToken, CheckKind::NothingSurvives}) {
            const auto finding = verify::claimSharers(kind, pod, std::nullopt);
            CHECK(finding.verdict == verify::Verdict::Unproven);
            REQUIRE(finding.evidence.size() == 1);
            CHECK(contains(finding.evidence[0],
                           "the namespace's pods were not read: whether another pod mounts claim "
                           "orders-data of this pod"));
            CHECK(verify::claimSharers(kind, hardenedPod("pod-uid-1"), std::nullopt).verdict ==
                  verify::Verdict::Pass);
        }
    }
    SECTION("hostile shapes are no sharer and never throw") {
        for (const json& pods :
             {json(nullptr), json("items"), json{{"items", "x"}},
              json{{"items", {1, "a", nullptr}}},
              json{{"items",
                    {{{"metadata", 7}, {"spec", {{"volumes", "x"}}}},
                     {{"spec", {{"volumes", {1, {{"persistentVolumeClaim", "orders-data"}}}}}}},
                     {{"spec",
                       {{"volumes", {{{"persistentVolumeClaim", {{"claimName", 5}}}}}}}}}}}}}) {
            INFO(pods.dump());
            const auto finding = verify::claimSharers(CheckKind::Egress, pod, pods);
            CHECK(finding.verdict == verify::Verdict::Pass);
        }
        json nameless = claimMounter("x", "orders-data");
        nameless["metadata"] = "not an object";
        const auto finding =
            verify::claimSharers(CheckKind::Egress, pod, verify_fixtures::list({nameless}));
        CHECK(finding.verdict == verify::Verdict::Fail);
        CHECK(contains(finding.evidence.at(0), "pod team1/? mounts claim orders-data"));
    }
    SECTION("a server's long name is clipped") {
        const auto finding = verify::claimSharers(
            CheckKind::NothingSurvives, pod,
            verify_fixtures::list(
                {claimMounter(std::string(5000, 'r') + "\nforged", "orders-data")}));
        CHECK(finding.verdict == verify::Verdict::Fail);
        CHECK(finding.evidence.at(0).size() < 300);
        CHECK_FALSE(contains(finding.evidence.at(0), "forged"));
    }
    SECTION("the template's pod: the pod it replaces is no sharer, a plain claim's user is") {
        json next = verify::podFromTemplate(sandbox(), pod);
        next["spec"]["volumes"].push_back(
            {{"name", "keep"}, {"persistentVolumeClaim", {{"claimName", "keep"}}}});
        json current = pod;
        current["spec"]["volumes"].push_back(next["spec"]["volumes"].back());
        CHECK(verify::claimSharers(CheckKind::Egress, next, verify_fixtures::list({current}),
                                   "orders")
                  .verdict == verify::Verdict::Pass);
        const auto shared = verify::claimSharers(
            CheckKind::Egress, next,
            verify_fixtures::list({current, claimMounter("relay", "keep")}), "orders");
        CHECK(shared.verdict == verify::Verdict::Fail);
        CHECK(shared.evidence.size() == 1);
    }
}

TEST_CASE("attack 60 S2: a claim filled from a data source does not start empty",
          "[verify][attack60]") {
    SECTION("cloned from a PVC the tenant made: the template and the claim say so") {
        json claimSpec = provisionedClaimSpec();
        claimSpec["dataSource"] = {{"kind", "PersistentVolumeClaim"}, {"name", "keep"}};
        json claim = boundClaim("pv-1");
        claim["spec"]["dataSource"] = claimSpec["dataSource"];
        const VolumeRun run =
            runWith(ephemeral(claimSpec), claim, provisionedVolume(), dynamicClass());
        INFO(run.text);
        const std::string token = run.checks["service-account-token"].dump();
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(token,
                       "volume data: claim orders-data was filled from PersistentVolumeClaim "
                       "keep: it starts with what that source held, which verify does not read"));
        CHECK_FALSE(contains(token, "provisioned empty"));
        CHECK(run.checks["nothing-survives"]["result"] == "unproven");
        CHECK(contains(run.checks["nothing-survives"].dump(),
                       "claim orders-data was filled from PersistentVolumeClaim keep: it starts "
                       "with what that source holds"));
    }
    SECTION("restored from a snapshot: only the claim says so") {
        json claim = boundClaim("pv-1");
        claim["spec"]["dataSourceRef"] = {{"apiGroup", "snapshot.storage.k8s.io"},
                                          {"kind", "VolumeSnapshot"},
                                          {"name", "snap-1"}};
        const VolumeRun run =
            runWith(ephemeral(provisionedClaimSpec()), claim, provisionedVolume(), dynamicClass());
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK(contains(run.checks["service-account-token"].dump(),
                       "claim orders-data was filled from VolumeSnapshot snap-1"));
        CHECK(run.checks["nothing-survives"]["result"] == "unproven");
    }
    SECTION("the template's next claim from a source, unbound: said as it will be") {
        json claimSpec = provisionedClaimSpec();
        claimSpec["dataSourceRef"] = {{"kind", "Populated"}, {"name", std::string(400, 'p')}};
        json pod = hardenedPod("pod-uid-1");
        pod["spec"]["volumes"].push_back(ephemeral(claimSpec));
        const std::string from = verify::claimFilledFrom(pod, pod["spec"]["volumes"].back(), {});
        CHECK(contains(from, "claim orders-data is filled from Populated ppp"));
        CHECK(contains(from, "... when it is made"));
        CHECK_FALSE(verify::startsEmpty(pod, pod["spec"]["volumes"].back(), {}));
        const auto finding = verify::nothingSurvivesStatic(
            pod, sandbox(), verify_fixtures::list({dynamicClass()})["items"], nullptr);
        CHECK(finding.verdict == verify::Verdict::Unproven);
    }
}
