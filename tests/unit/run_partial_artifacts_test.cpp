// sandbox run --artifacts when the run does not end well: a timed-out or killed command still
// leaves what it wrote, and whenever the artifacts are not whole (a cap included) the files
// that arrived stay and stderr and -o json say plainly that they are partial.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;
namespace fs = std::filesystem;

namespace {

const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kRunPod = "rossoctl-run-00000001";

json runningPod() {
    return {
        {"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "uid-run"}}},
        {"spec", {{"containers", {{{"name", "run"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "run"}, {"state", {{"running", json::object()}}}}}}}}};
}

// The run pod, Running at once; its exec sessions are `sessions` (a pod rossoctl wrote needs
// no mount probe).
void serveRun(TestHost& host, const std::vector<testing::ExecScript>& sessions) {
    host.server.onJson("POST", kPods, 201, runningPod());
    host.server.onJson(
        "GET", kPods, 200,
        {{"kind", "List"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", {runningPod()}}});
    host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
    for (const auto& session : sessions) host.server.onExec("team1", kRunPod, session);
}

std::string outArchive(int files) {
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    for (int i = 0; i < files; ++i) writer.addFile(fmt::format("./part-{:02}.csv", i), "1,2\n");
    writer.finish();
    return archive;
}

size_t filesIn(const std::string& dir) {
    if (!fs::exists(dir)) return 0;
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("sandbox run --timeout: what the command wrote before it was cut is collected, partial",
          "[run][command][artifacts]") {
    TempDir dir;
    TestHost host;
    auto stuck = execRan("step 1 done\n", "", 0);
    stuck.hangs = true;  // runs past --timeout
    serveRun(host, {stuck, execRan("", "", 0), execRan(outArchive(2), "", 0)});
    const std::string out = dir.file("out");
    CHECK(host.run({"sandbox", "run", "--timeout", "5s", "--artifacts", out, "-o", "json", "--",
                    "python3", "job.py"}) == app::run::kExitTimedOut);
    // What it left running is stopped first, so the files no longer change while read.
    REQUIRE(host.server.execs.size() == 3);
    CHECK(host.server.execs[1].command == app::run::stopCommandLine());
    CHECK(host.server.execs[2].command == app::run::collectCommandLine("/workspace"));
    CHECK(filesIn(out) == 2);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["timedOut"] == true);
    CHECK(result["artifacts"].size() == 2);
    CHECK(result["artifactsPartial"] == true);
    CHECK(result["artifactsPartialReason"].get<std::string>().find(
              "ran longer than --timeout and was killed") != std::string::npos);
    CHECK(host.err.str().find(fmt::format("warning: the artifacts in {} are partial (2 files "
                                          "kept): the command ran longer than --timeout",
                                          out)) != std::string::npos);
    CHECK(host.server.writes().back() == "DELETE " + kPods + "/" + kRunPod);

    // Without --artifacts too: the help says a timed-out command is killed, and with --keep the
    // pod outlives the run, so what the command left running is stopped either way.
    TestHost kept;
    serveRun(kept, {stuck, execRan("", "", 0)});
    CHECK(kept.run({"sandbox", "run", "--timeout", "5s", "--keep", "--", "sh", "loop.sh"}) ==
          app::run::kExitTimedOut);
    REQUIRE(kept.server.execs.size() == 2);
    CHECK(kept.server.execs[1].command == app::run::stopCommandLine());
    CHECK(kept.err.str().find("partial") == std::string::npos);  // nothing was collected
}

TEST_CASE(
    "sandbox run --artifacts-max-files: the files that arrived stay, said to be partial, "
    "exit 125 with the result still printed",
    "[run][command][artifacts]") {
    TempDir dir;
    TestHost host;
    serveRun(host, {execRan("done\n", "", 0), execRan(outArchive(20), "", 0)});
    const std::string out = dir.file("out");
    CHECK(host.run({"sandbox", "run", "--artifacts", out, "--artifacts-max-files", "15", "-o",
                    "json", "--", "python3", "job.py"}) == app::run::kExitRunFailed);
    CHECK(filesIn(out) == 15);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["exitCode"] == 0);  // the code's own status, beside rossoctl's failure
    CHECK(result["artifacts"].size() == 15);
    CHECK(result["artifactsPartial"] == true);
    CHECK(result["artifactsPartialReason"].get<std::string>().find("--artifacts-max-files") !=
          std::string::npos);
    CHECK(host.err.str().find(fmt::format("error: the artifacts in {} are partial (15 files "
                                          "kept): ",
                                          out)) != std::string::npos);
    CHECK(host.server.writes().back() == "DELETE " + kPods + "/" + kRunPod);

    TestHost whole;  // within the cap: complete, and -o json says so
    serveRun(whole, {execRan("done\n", "", 0), execRan(outArchive(3), "", 0)});
    REQUIRE(whole.run({"sandbox", "run", "--artifacts", dir.file("whole"), "-o", "json", "--",
                       "python3", "job.py"}) == 0);
    CHECK(testing::printedJson(whole.out.str())["artifactsPartial"] == false);
    CHECK(whole.err.str().find("partial") == std::string::npos);
}

TEST_CASE(
    "sandbox run killed (exit 137): its files are collected when the container is left, "
    "and a container gone with them keeps the exit status",
    "[run][command][artifacts]") {
    TempDir dir;
    TestHost left;  // the OOM killer took the command only: the container runs on
    serveRun(left, {execRan("", "", app::run::kExitKilled),
                    execRan("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n", "", 0), execRan("", "", 0),
                    execRan(outArchive(1), "", 0)});
    left.server.onJson("GET", kPods + "/" + kRunPod, 200, runningPod());
    CHECK(left.run({"sandbox", "run", "--memory", "64Mi", "--artifacts", dir.file("a"), "--",
                    "python3", "big.py"}) == app::run::kExitKilled);
    REQUIRE(left.server.execs.size() == 4);
    CHECK(left.server.execs[1].command == app::run::oomEventsCommandLine());
    CHECK(left.err.str().find("error: the run ended: OOMKilled (exit 137): it ran out of memory "
                              "(the container's cgroup counts 1 OOM kill under --memory 64Mi)") !=
          std::string::npos);
    CHECK(filesIn(dir.file("a")) == 1);
    CHECK(left.err.str().find("warning: the artifacts in " + dir.file("a") +
                              " are partial (1 file kept): the command was killed (exit 137)") !=
          std::string::npos);

    TestHost gone;
    serveRun(gone,
             {execRan("", "", app::run::kExitKilled),
              testing::execRefused(
                  400, testing::statusBody(400, "BadRequest", "container not found (\"run\")"))});
    CHECK(gone.run({"sandbox", "run", "--artifacts", dir.file("b"), "--", "python3", "big.py"}) ==
          app::run::kExitKilled);
    CHECK(gone.err.str().find("warning: the artifacts in " + dir.file("b") +
                              " are partial (0 files kept): the command was killed (exit 137)") !=
          std::string::npos);
    CHECK(gone.err.str().find("container not found") != std::string::npos);
}
