// sandbox run says why a run ended (one stderr line, `ended` in -o json, the exit code) and
// reports what ran: the image digest, node and runtime class, warm or cold and why, each
// phase's time and each artifact's hash, on stdout (-o json) or in a file (--report).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "json_fixtures.hpp"
#include "rossoctl/app/extract.hpp"
#include "rossoctl/app/run/report.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::list;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;
namespace fs = std::filesystem;

namespace {

const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kRunPod = "rossoctl-run-00000001";
const std::string kDigest =
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kImageID = "docker.io/library/python@" + kDigest;

// The run pod, Running, on node-1 in RuntimeClass gvisor; `imageID` in its container status.
json runningPod(const std::string& imageID = kImageID) {
    json container = {{"name", "run"}, {"state", {{"running", json::object()}}}};
    if (!imageID.empty()) container["imageID"] = imageID;
    return {{"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "uid-run"}}},
            {"spec",
             {{"nodeName", "node-1"},
              {"runtimeClassName", "gvisor"},
              {"containers",
               {{{"name", "run"},
                 {"image", "docker.io/library/python:3.12-slim"},
                 {"resources", {{"limits", {{"memory", "64Mi"}}}}}}}}}},
            {"status", {{"phase", "Running"}, {"containerStatuses", {container}}}}};
}

// The run pod is created and listed Running (the wait's LIST is what the report reads); its
// exec sessions are `sessions`, the last one repeating.
void serveRun(TestHost& host, const std::vector<testing::ExecScript>& sessions,
              const json& listed = runningPod()) {
    host.server.onJson("POST", kPods, 201, runningPod());
    host.server.onJson("GET", kPods, 200, list({listed}));
    host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
    for (const auto& session : sessions) host.server.onExec("team1", kRunPod, session);
}

// The pod as a GET after the command reads it: `status` merged into a Running pod's.
json podWithStatus(const json& status) {
    json pod = runningPod();
    pod["status"].update(status);
    return pod;
}

std::string outArchive(const std::vector<std::pair<std::string, std::string>>& files) {
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    for (const auto& [name, content] : files) writer.addFile(name, content);
    writer.finish();
    return archive;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

testing::ExecScript hangs() {
    testing::ExecScript script;
    script.hangs = true;
    return script;
}

}  // namespace

TEST_CASE("sandbox run: OOMKilled says so with the limit, exit 137", "[run][command][ended]") {
    TestHost host;
    json oom = podWithStatus(
        {{"containerStatuses",
          {{{"name", "run"},
            {"imageID", kImageID},
            {"state", {{"terminated", {{"reason", "OOMKilled"}, {"exitCode", 137}}}}}}}}});
    serveRun(host, {execRan("", "", app::run::kExitKilled), execRan("", "", 0)});
    host.server.onJson("GET", kPods + "/" + kRunPod, 200, oom);
    CHECK(host.run({"sandbox", "run", "--memory", "64Mi", "-o", "json", "--", "python3",
                    "big.py"}) == 137);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["exitCode"] == 137);
    CHECK(result["ended"]["reason"] == "OOMKilled");
    CHECK(result["ended"]["memoryLimit"] == "64Mi");
    CHECK(host.err.str() ==
          "error: the run ended: OOMKilled (exit 137): it ran out of memory (OOMKilled: the "
          "container's memory limit, 64Mi, was hit); give it more with --memory\n");
}

TEST_CASE("sandbox run: past --timeout is TimedOut, exit 124", "[run][command][ended]") {
    TestHost host;
    serveRun(host, {hangs(), execRan("", "", 0)});
    CHECK(host.run({"sandbox", "run", "--timeout", "5s", "-o", "json", "--", "sleep", "99"}) ==
          124);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["ended"] ==
          json{{"reason", "TimedOut"}, {"message", "the command ran longer than --timeout 5s"}});
    CHECK(result["timedOut"] == true);
    CHECK(host.err.str() ==
          "error: the run ended: TimedOut (exit 124): the command ran longer than --timeout 5s; "
          "pod " +
              kRunPod + " deleted\n");
}

TEST_CASE("sandbox run: the pod's deadline and an eviction are said, exit 137",
          "[run][command][ended]") {
    struct Case {
        std::string podReason, reason;
    };
    for (const auto& c : std::vector<Case>{{"DeadlineExceeded", "DeadlineExceeded"},
                                           {"Evicted", "Evicted"},
                                           {"NodeLost", "Killed"}}) {
        INFO(c.podReason);
        TestHost host;
        serveRun(host, {execRan("", "", app::run::kExitKilled), execRan("", "", 0)});
        host.server.onJson(
            "GET", kPods + "/" + kRunPod, 200,
            podWithStatus({{"phase", "Failed"}, {"reason", c.podReason}, {"message", "gone"}}));
        CHECK(host.run({"sandbox", "run", "-o", "json", "--", "true"}) == 137);
        const json result = testing::printedJson(host.out.str());
        CHECK(result["ended"]["reason"] == c.reason);
        CHECK(result["ended"]["message"] == "the pod was stopped (" + c.podReason + ": gone)");
        CHECK(host.err.str() == "error: the run ended: " + c.reason +
                                    " (exit 137): the pod was stopped (" + c.podReason +
                                    ": gone); pod " + kRunPod + " deleted\n");
    }
}

TEST_CASE("sandbox run: a SIGKILL the pod does not explain is Killed", "[run][command][ended]") {
    TestHost host;  // the status is healthy and the cgroup counts no OOM kill
    serveRun(host, {execRan("", "", app::run::kExitKilled), execRan("oom_kill 0\n", "", 0),
                    execRan("", "", 0)});
    host.server.onJson("GET", kPods + "/" + kRunPod, 200, runningPod());
    CHECK(host.run({"sandbox", "run", "--", "sh", "-c", "kill -9 $$"}) == 137);
    CHECK(host.err.str().find("error: the run ended: Killed (exit 137): it got SIGKILL") !=
          std::string::npos);
}

TEST_CASE("sandbox run -o json: output at --output-max-bytes stops the command, exit 125",
          "[run][command][ended]") {
    TestHost host;
    serveRun(host, {execRan("0123456789", "", 0), execRan("", "", 0)});
    CHECK(host.run({"sandbox", "run", "-o", "json", "--output-max-bytes", "4", "--", "yes"}) ==
          125);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["stdout"] == "0123");
    CHECK(result["stdoutTruncated"] == true);
    CHECK(result["ended"]["reason"] == "OutputCapReached");
    CHECK(result["exitCode"] == 125);
    // What the command left running is stopped before the pod goes.
    REQUIRE(host.server.execs.size() == 2);
    CHECK(host.server.execs[1].command == app::run::stopCommandLine());
    CHECK(host.err.str() ==
          "error: the run ended: OutputCapReached (exit 125): its stdout reached "
          "--output-max-bytes and the command was stopped; raise --output-max-bytes, or leave "
          "out -o json to stream the output\n");

    TestHost streamed;  // without -o json nothing is captured, so there is no cap to reach
    serveRun(streamed, {execRan("0123456789", "", 0)});
    CHECK(streamed.run({"sandbox", "run", "--output-max-bytes", "4", "--", "yes"}) == 0);
    CHECK(streamed.out.str() == "0123456789");
}

TEST_CASE(
    "sandbox run -o json and --report: the digest, node, runtime class, cold start, "
    "phases and artifact hashes, with no request added",
    "[run][command][report][requests]") {
    TempDir dir;
    const std::string artifacts = dir.file("arts");
    const std::string reportPath = dir.file("run.json");
    const std::string archive = outArchive({{"./a.txt", "alpha\n"}, {"./b.csv", "1,2\n"}});
    TestHost host;
    serveRun(host, {execRan("42\n", "", 0), execRan(archive, "", 0)});
    REQUIRE(host.run({"sandbox", "run", "--artifacts", artifacts, "--report", reportPath, "-o",
                      "json", "--", "python3", "main.py"}) == 0);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["stdout"] == "42\n");
    CHECK(result["ended"] == json{{"reason", "Exited"}});
    CHECK(result["image"] == "docker.io/library/python:3.12-slim");
    CHECK(result["imageID"] == kImageID);
    CHECK(result["imageDigest"] == kDigest);
    CHECK(result["node"] == "node-1");
    CHECK(result["runtimeClass"] == "gvisor");
    CHECK(result["namespace"] == "team1");
    CHECK(result["start"] == "cold");
    CHECK(result["coldStartReason"] == "a new pod for this run (no --pool)");
    for (const char* phase : {"schedule", "upload", "run", "collect", "cleanup", "total"})
        CHECK(result["durations"][phase].is_number_integer());
    REQUIRE(result["artifacts"].size() == 2);
    for (const auto& artifact : result["artifacts"]) {
        const std::string content = slurp(artifacts + "/" + artifact["path"].get<std::string>());
        CHECK(artifact["bytes"] == content.size());
        CHECK(artifact["sha256"] == app::sha256Hex(content));
    }
    // The wait's LIST already said what ran: no GET of the pod for the report. (The reaper's
    // LIST, the POST, the wait's LIST, two execs, the DELETE.)
    CHECK(host.server.requestsTo("GET", kPods + "/" + kRunPod).empty());
    CHECK(host.server.sent().size() == 6);

    // The file holds the same report but the streams, mode 0644.
    json report = json::parse(slurp(reportPath));
    json expected = result;
    expected.erase("stdout");
    expected.erase("stderr");
    CHECK(report == expected);
    struct stat info {};
    REQUIRE(::stat(reportPath.c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0644);
    // Nothing left beside it.
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 2);
}

TEST_CASE(
    "sandbox run --report: streams still go to stdout; the file replaces a symlink "
    "at the path and never writes through it",
    "[run][command][report]") {
    TempDir dir;
    const std::string target = dir.write("precious.txt", "keep me\n");
    const std::string reportPath = dir.file("run.json");
    fs::create_symlink(target, reportPath);
    TestHost host;
    serveRun(host, {execRan("42\n", "warn\n", 3)});
    CHECK(host.run({"sandbox", "run", "--report", reportPath, "--", "python3", "main.py"}) == 3);
    CHECK(host.out.str() == "42\n");
    CHECK(host.err.str() == "warn\n");
    CHECK(slurp(target) == "keep me\n");
    CHECK_FALSE(fs::is_symlink(reportPath));
    const json report = json::parse(slurp(reportPath));
    CHECK(report["exitCode"] == 3);
    CHECK(report["ended"]["reason"] == "Exited");
    CHECK_FALSE(report.contains("stdout"));
}

TEST_CASE("sandbox run --report: a path it cannot write is refused before anything is sent",
          "[run][command][report]") {
    TempDir dir;
    for (const auto& path : {std::string("-"), dir.path(), dir.file("missing/run.json")}) {
        INFO(path);
        TestHost host;
        CHECK(host.run({"sandbox", "run", "--report", path, "--", "true"}) == 125);
        CHECK(host.server.requests.empty());
        CHECK(host.err.str().rfind("error: --report ", 0) == 0);
    }
}

TEST_CASE(
    "sandbox run: the report reads the pod once when what the run read lacks the digest, "
    "and never without -o json or --report",
    "[run][command][report][requests]") {
    const json noDigest = runningPod("");
    TestHost host;
    serveRun(host, {execRan("", "", 0)}, noDigest);
    host.server.onJson("GET", kPods + "/" + kRunPod, 200, runningPod());
    REQUIRE(host.run({"sandbox", "run", "-o", "json", "--", "true"}) == 0);
    CHECK(testing::printedJson(host.out.str())["imageDigest"] == kDigest);
    CHECK(host.server.requestsTo("GET", kPods + "/" + kRunPod).size() == 1);

    TestHost plain;
    serveRun(plain, {execRan("", "", 0)}, noDigest);
    plain.server.onJson("GET", kPods + "/" + kRunPod, 200, runningPod());
    REQUIRE(plain.run({"sandbox", "run", "--", "true"}) == 0);
    CHECK(plain.server.requestsTo("GET", kPods + "/" + kRunPod).empty());
}

TEST_CASE("run report: why a claim cold-started, read as upstream's claim controller decides",
          "[run][report]") {
    const json pool = {{"status", {{"replicas", 3}, {"readyReplicas", 2}}}};
    json claim = {{"spec", {{"warmPoolRef", {{"name", "p"}}}}}};
    CHECK(app::run::claimColdStartReason(claim, pool).find("had 2 of 3 sandboxes ready") !=
          std::string::npos);
    claim["spec"]["env"] = {{{"name", "K"}, {"value", "v"}}};
    CHECK(app::run::claimColdStartReason(claim, pool).find("sets env or volumeClaimTemplates") !=
          std::string::npos);
    CHECK(app::run::imageDigest("docker-pullable://r/x@" + kDigest) == kDigest);
    CHECK(app::run::imageDigest(kDigest) == kDigest);
    CHECK(app::run::imageDigest("sha256:beef").empty());
    CHECK(app::run::imageDigest("").empty());
}

// Review 47a finding 1: the report was dumped with nlohmann's strict handler: a file name the
// code chose that is not UTF-8 lost the report and turned the code's exit 0 into 125.
TEST_CASE("sandbox run --report: an artifact name that is not UTF-8 keeps the report and the exit",
          "[run][command][report][review47a]") {
    TempDir dir;
    const std::string artifacts = dir.file("arts");
    const std::string reportPath = dir.file("run.json");
    const std::string archive = outArchive({{"./bad\xff.txt", "x\n"}});
    TestHost host;
    serveRun(host, {execRan("", "", 0), execRan(archive, "", 0)});
    CHECK(host.run({"sandbox", "run", "--artifacts", artifacts, "--report", reportPath, "--",
                    "python3", "main.py"}) == 0);
    INFO(host.err.str());
    REQUIRE(fs::exists(reportPath));
    const json report = json::parse(slurp(reportPath));
    REQUIRE(report["artifacts"].size() == 1);
    CHECK(report["artifacts"][0]["path"] == "bad\xef\xbf\xbd.txt");
    CHECK(host.err.str().find("malformed data") == std::string::npos);
}

// Review 47a finding 3: the code names what lands in --artifacts; an existing directory took it
// over whatever was there (`--artifacts .` in a checkout: .git/hooks/pre-commit, mode 0755).
TEST_CASE("sandbox run --artifacts into a directory that holds files needs --force",
          "[run][command][review47a]") {
    TempDir dir;
    const std::string artifacts = dir.file("arts");
    fs::create_directories(artifacts);
    { std::ofstream(artifacts + "/keep.txt") << "mine\n"; }
    const std::string archive = outArchive({{"./keep.txt", "theirs\n"}});
    TestHost refused;
    serveRun(refused, {execRan("", "", 0), execRan(archive, "", 0)});
    CHECK(refused.run({"sandbox", "run", "--artifacts", artifacts, "--", "true"}) == 125);
    CHECK(refused.err.str().find("already holds files; nothing was run") != std::string::npos);
    CHECK(refused.server.requests.empty());
    CHECK(slurp(artifacts + "/keep.txt") == "mine\n");

    TestHost forced;
    serveRun(forced, {execRan("", "", 0), execRan(archive, "", 0)});
    CHECK(forced.run({"sandbox", "run", "--artifacts", artifacts, "--force", "--", "true"}) == 0);
    CHECK(slurp(artifacts + "/keep.txt") == "theirs\n");

    TestHost empty;  // an empty directory is as good as a new one
    const std::string fresh = dir.file("fresh");
    fs::create_directories(fresh);
    serveRun(empty, {execRan("", "", 0), execRan(archive, "", 0)});
    CHECK(empty.run({"sandbox", "run", "--artifacts", fresh, "--", "true"}) == 0);
    CHECK(slurp(fresh + "/keep.txt") == "theirs\n");
}
