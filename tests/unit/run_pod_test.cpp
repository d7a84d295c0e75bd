// The run pod, warm pool pod, claim patch, in-pod command lines and the -o json shape.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/errors.hpp"

using namespace rossoctl::app::run;
using nlohmann::json;

TEST_CASE("the run pod is hardened, labelled and dies at timeout plus margin", "[run]") {
    const json pod = runPodManifest("rossoctl-run-1", RunPodShape{}, 60);
    const json& spec = pod["spec"];
    CHECK(pod["metadata"]["name"] == "rossoctl-run-1");
    CHECK(pod["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "rossoctl");
    CHECK(pod["metadata"]["labels"]["rossoctl.dev/run"] == "true");
    CHECK(spec["automountServiceAccountToken"] == false);
    CHECK(spec["restartPolicy"] == "Never");
    CHECK(spec["activeDeadlineSeconds"] == 60 + kDeadlineMarginSeconds);
    const json& container = spec["containers"][0];
    CHECK(container["name"] == "run");
    CHECK(container["command"] == json({"sleep", std::to_string(60 + kDeadlineMarginSeconds)}));
    CHECK(container["resources"]["limits"]["cpu"] == "500m");
    CHECK(container["resources"]["limits"]["memory"] == "512Mi");
    CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);
    CHECK(container["securityContext"]["capabilities"]["drop"] == json({"ALL"}));
    CHECK(spec["securityContext"]["runAsNonRoot"] == true);
    bool workspace = false;
    for (const auto& volume : spec["volumes"])
        if (volume["name"] == "workspace") workspace = volume.contains("emptyDir");
    CHECK(workspace);
}

TEST_CASE("warm pods carry the pool label and their shape", "[run]") {
    RunPodShape shape;
    shape.cpu = "1";
    const json pod = warmPodManifest(shape, 3600);
    CHECK(pod["metadata"]["generateName"] == "rossoctl-pool-");
    CHECK(pod["metadata"]["labels"]["rossoctl.dev/pool"] == "warm");
    CHECK_FALSE(pod["metadata"]["labels"].contains("rossoctl.dev/run"));
    CHECK(pod["metadata"]["annotations"]["rossoctl.dev/pool-shape"] == shapeKey(shape));
    CHECK(shapeKey(shape) != shapeKey(RunPodShape{}));
    CHECK(pod["spec"]["activeDeadlineSeconds"] == 3600);
}

TEST_CASE("the claim patch tests the warm label before changing it", "[run]") {
    const json patch = json::parse(claimPatch("host/1/ab", 200));
    REQUIRE(patch.size() == 5);
    CHECK(
        patch[0] ==
        json({{"op", "test"}, {"path", "/metadata/labels/rossoctl.dev~1pool"}, {"value", "warm"}}));
    CHECK(patch[1]["value"] == "claimed");
    CHECK(patch[2]["path"] == "/metadata/labels/rossoctl.dev~1run");
    CHECK(patch[3]["path"] == "/metadata/annotations/rossoctl.dev~1claimed-by");
    CHECK(patch[4] ==
          json({{"op", "replace"}, {"path", "/spec/activeDeadlineSeconds"}, {"value", 200}}));
    CHECK(json::parse(claimPatch("x", std::nullopt)).size() == 4);
}

TEST_CASE("the run command line passes env and arguments as words", "[run]") {
    const auto argv = runCommandLine("/workspace", {{"A", "1 2"}, {"B", "--"}},
                                     {"python3", "-c", "print('$HOME')"});
    REQUIRE(argv.size() == 11);
    CHECK(argv[0] == "sh");
    CHECK(argv[4] == "/workspace");
    CHECK(argv[5] == "A=1 2");
    CHECK(argv[6] == "B=--");
    CHECK(argv[7] == "--");
    CHECK(argv[10] == "print('$HOME')");
    CHECK(uploadCommandLine("/w") ==
          std::vector<std::string>{"tar", "-x", "-m", "-f", "-", "-C", "/w"});
}

TEST_CASE("run input checks", "[run]") {
    CHECK_NOTHROW(validateRunEnvName("PYTHONPATH"));
    CHECK_THROWS_AS(validateRunEnvName("A-B"), rossoctl::UsageError);
    CHECK_THROWS_AS(validateRunEnvName("1A"), rossoctl::UsageError);
    CHECK_NOTHROW(validateWorkdir("/workspace"));
    CHECK_NOTHROW(validateWorkdir("/home/agent/work"));
    for (const char* bad : {"/", "workspace", "/a/../b", "/a/", "/a//b", "/a/./b"})
        CHECK_THROWS_AS(validateWorkdir(bad), rossoctl::UsageError);
}

TEST_CASE("-o json has the documented shape", "[run]") {
    RunOutcome outcome;
    outcome.exitCode = 3;
    outcome.pod = "rossoctl-run-1";
    outcome.artifacts = {{"a.txt", 3, "abc"}};
    outcome.durations.schedule = std::chrono::milliseconds(1200);
    outcome.durations.cleanup = std::chrono::milliseconds(30);
    const json result = runResultJson(outcome, "out\n", "err\n");
    CHECK(result["stdout"] == "out\n");
    CHECK(result["stderr"] == "err\n");
    CHECK(result["exitCode"] == 3);
    CHECK(result["timedOut"] == false);
    CHECK(result["artifacts"] == json::parse(R"([{"path":"a.txt","bytes":3,"sha256":"abc"}])"));
    for (const char* phase : {"schedule", "upload", "run", "collect", "cleanup"})
        CHECK(result["durations"][phase].is_number_integer());
    CHECK(result["durations"]["schedule"] == 1200);
    CHECK_FALSE(result.contains("rejectedArtifacts"));
}
