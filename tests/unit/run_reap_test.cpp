#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/run_pod.hpp"

using namespace rossoctl;
using namespace rossoctl::app::run;
using nlohmann::json;
using rossoctl::testing::ClientFixture;

namespace {

json runPod(const std::string& name, const std::string& phase, const std::string& owner) {
    json pod = {
        {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", {{kRunLabel, "true"}}}}},
        {"status", {{"phase", phase}}}};
    if (!owner.empty()) pod["metadata"]["annotations"][kRunOwnerAnnotation] = owner;
    return pod;
}

bool ownerAlive(const std::string& owner) {
    return owner == "alive";
}

}  // namespace

TEST_CASE("a run pod is left over when its run ended or its process is gone", "[run][fault]") {
    CHECK(isLeftoverRunPod(runPod("a", "Running", "gone"), ownerAlive));
    CHECK(isLeftoverRunPod(runPod("b", "Failed", "alive"), ownerAlive));  // deadline passed
    CHECK_FALSE(isLeftoverRunPod(runPod("c", "Running", "alive"), ownerAlive));
    // --keep: no owner, kept until its deadline.
    CHECK_FALSE(isLeftoverRunPod(runPod("d", "Running", ""), ownerAlive));
    json terminating = runPod("e", "Running", "gone");
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    CHECK_FALSE(isLeftoverRunPod(terminating, ownerAlive));
    json notARun = runPod("f", "Failed", "gone");
    notARun["metadata"]["labels"] = json::object();
    CHECK_FALSE(isLeftoverRunPod(notARun, ownerAlive));
}

TEST_CASE("this process is alive; a pid that is not, or one reused, is not", "[run][fault]") {
    const std::string me = currentRunOwner();
    CHECK(localOwnerAlive(me));
    const std::string host = me.substr(0, me.find('/'));
    CHECK_FALSE(localOwnerAlive(host + "/999999999/12345"));
    // Same pid, another start time: the pid was reused, the owner is gone.
    CHECK_FALSE(localOwnerAlive(me.substr(0, me.rfind('/')) + "/1"));
    // Another host or a malformed owner: not ours to judge.
    CHECK(localOwnerAlive("other-host.invalid/1/1"));
    CHECK(localOwnerAlive("garbage"));
}

TEST_CASE("reaping deletes only leftovers, each with its UID as precondition", "[run][fault]") {
    ClientFixture fixture;
    json list = {{"kind", "PodList"},
                 {"metadata", {{"resourceVersion", "1"}}},
                 {"items", json::array({runPod("live", "Running", "alive"),
                                        runPod("killed", "Running", "gone"),
                                        runPod("expired", "Failed", "alive")})}};
    fixture.server.reply(200, list.dump());
    fixture.server.reply(200, R"({"kind":"Status","status":"Success"})");
    fixture.server.reply(404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
    auto reaped = reapLeftoverRunPods(*fixture.client, "team1", ownerAlive);
    CHECK(reaped == std::vector<std::string>{"killed"});
    REQUIRE(fixture.server.requests.size() == 3);
    CHECK(fixture.server.requests[0].url.find("labelSelector=rossoctl.dev%2Frun%3Dtrue") !=
          std::string::npos);
    CHECK(fixture.server.requests[1].method == "DELETE");
    CHECK(fixture.server.requests[1].url.find("/pods/killed") != std::string::npos);
    CHECK(fixture.server.requests[1].body.find("uid-killed") != std::string::npos);
    CHECK(fixture.server.requests[2].url.find("/pods/expired") != std::string::npos);
}
