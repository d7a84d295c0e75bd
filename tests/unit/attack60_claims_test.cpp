// Attack 60's volume false passes, offline: a claim filled from a data source, which starts
// with what that source holds (S2).
#include <catch2/catch.hpp>

#include "rossoctl/verify/volume_claims.hpp"
#include "volume_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using namespace rossoctl::testing::volume_fixtures;
namespace verify_fixtures = rossoctl::testing::verify_fixtures;

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
