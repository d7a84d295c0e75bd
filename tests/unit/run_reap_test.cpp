#include <unistd.h>

#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using namespace rossoctl::app::run;
using nlohmann::json;
using rossoctl::testing::ClientFixture;

namespace {

json runPod(const std::string& name, const std::string& phase, const std::string& owner) {
    json pod = {{"metadata",
                 {{"name", name},
                  {"uid", "uid-" + name},
                  {"labels", {{kRunLabel, "true"}, {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
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

namespace {
// The owner with one field replaced ("pid", "999999999").
std::string withField(const std::string& owner, const std::string& key, const std::string& value) {
    const auto at = owner.find(";" + key + "=") + key.size() + 2;
    return owner.substr(0, at) + value +
           owner.substr(owner.find(';', at) == std::string::npos ? owner.size()
                                                                 : owner.find(';', at));
}
}  // namespace

TEST_CASE("this process is alive; a pid that is not, or one reused, is not", "[run][fault]") {
    testing::CountingRandom random;
    const std::string me = currentRunOwner(random);
    CHECK(me.starts_with("v2;boot="));
    CHECK(me.find(";token=0000000100000002") != std::string::npos);
    CHECK(localOwnerAlive(me));
    CHECK_FALSE(localOwnerAlive(withField(me, "pid", "999999999")));
    // Same pid, another start time: the pid was reused, the owner is gone.
    CHECK_FALSE(localOwnerAlive(withField(me, "start", "1")));
}

TEST_CASE("an owner that cannot be checked from here is alive", "[run][fault][hostile]") {
    testing::CountingRandom random;
    const std::string me = currentRunOwner(random);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    // The old form: a colleague's run on another CI runner that shares this hostname.
    CHECK(localOwnerAlive(std::string(host) + "/4242/777777"));
    // Another boot, machine or pid namespace (another container): not ours to judge.
    CHECK(localOwnerAlive(withField(withField(me, "boot", "x"), "pid", "999999999")));
    CHECK(localOwnerAlive(withField(withField(me, "machine", "x"), "pid", "999999999")));
    CHECK(localOwnerAlive(withField(withField(me, "pidns", "1"), "pid", "999999999")));
    // Malformed: a pid that is no number, no token, junk.
    CHECK(localOwnerAlive(withField(me, "pid", "-1")));
    CHECK(localOwnerAlive(withField(withField(me, "token", ""), "pid", "999999999")));
    CHECK(localOwnerAlive("garbage"));
    CHECK(localOwnerAlive("v2;pid=999999999"));
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
    CHECK(reaped.deleted == std::vector<std::string>{"killed"});
    CHECK(reaped.skipped.empty());
    REQUIRE(fixture.server.requests.size() == 3);
    CHECK(fixture.server.requests[0].url.find("labelSelector=rossoctl.dev%2Frun%3Dtrue") !=
          std::string::npos);
    CHECK(fixture.server.requests[1].method == "DELETE");
    CHECK(fixture.server.requests[1].url.find("/pods/killed") != std::string::npos);
    CHECK(fixture.server.requests[1].body.find("uid-killed") != std::string::npos);
    CHECK(fixture.server.requests[2].url.find("/pods/expired") != std::string::npos);
}

TEST_CASE("the reaper never deletes the pod collection for a nameless leftover",
          "[run][fault][hostile]") {
    // A leftover with name "" made DELETE /api/v1/namespaces/team1/pods (review 29, H5).
    ClientFixture fixture;
    json foreign = runPod("elsewhere", "Failed", "gone");
    foreign["metadata"]["namespace"] = "kube-system";
    json list = {{"kind", "PodList"},
                 {"metadata", {{"resourceVersion", "1"}}},
                 {"items", json::array({runPod("", "Failed", "gone"), runPod("/", "Failed", "gone"),
                                        foreign, runPod("killed", "Running", "gone")})}};
    fixture.server.reply(200, list.dump());
    fixture.server.reply(200, R"({"kind":"Status","status":"Success"})");
    const auto reaped = reapLeftoverRunPods(*fixture.client, "team1", ownerAlive);
    CHECK(reaped.deleted == std::vector<std::string>{"killed"});
    REQUIRE(reaped.skipped.size() == 3);
    CHECK(reaped.skipped[0] == "its name \"\" is empty");
    CHECK(reaped.skipped[2] ==
          "it was listed in team1 but its metadata.namespace is \"kube-system\"");
    REQUIRE(fixture.server.requests.size() == 2);
    CHECK(fixture.server.requests[1].url ==
          "https://api.test:6443/api/v1/namespaces/team1/pods/killed");
}

TEST_CASE("the reaper keeps a live run of another machine that shares this hostname",
          "[run][fault][hostile]") {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    ClientFixture fixture;
    json list = {
        {"kind", "PodList"},
        {"metadata", {{"resourceVersion", "1"}}},
        {"items",
         json::array({runPod("colleague", "Running", std::string(host) + "/4242/777777")})}};
    fixture.server.reply(200, list.dump());
    fixture.server.reply(200, R"({"kind":"Status","status":"Success"})");
    CHECK(reapLeftoverRunPods(*fixture.client, "team1").deleted.empty());
    CHECK(fixture.server.requests.size() == 1);  // the LIST, no DELETE
}

TEST_CASE("the reaper takes only pods with rossoctl's managed-by label besides the run label",
          "[run][fault][hostile]") {
    json foreign = runPod("foreign", "Failed", "gone");
    foreign["metadata"]["labels"].erase("app.kubernetes.io/managed-by");
    json other = runPod("other", "Failed", "gone");
    other["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "someone-else";
    CHECK_FALSE(isLeftoverRunPod(foreign, ownerAlive));
    CHECK_FALSE(isLeftoverRunPod(other, ownerAlive));
    CHECK(isLeftoverRunPod(runPod("ours", "Failed", "gone"), ownerAlive));
}
