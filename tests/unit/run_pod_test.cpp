// The run pod, warm pool pod, claim patch, in-pod command lines and the -o json shape.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "local_shell.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "temp_dir.hpp"

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

TEST_CASE("--runtime-class runs the pod in that RuntimeClass and is part of its pool's shape",
          "[run]") {
    RunPodShape shape;
    CHECK_FALSE(runPodManifest("r", shape, 60)["spec"].contains("runtimeClassName"));
    // The key of a shape without it is what pools made before the flag carry.
    CHECK(shapeKey(shape) ==
          R"({"cpu":"500m","image":"docker.io/library/python:3.12-slim","memory":"512Mi",)"
          R"("workdir":"/workspace"})");
    shape.runtimeClass = "gvisor";
    CHECK(runPodManifest("r", shape, 60)["spec"]["runtimeClassName"] == "gvisor");
    CHECK(warmPodManifest(shape, 600)["spec"]["runtimeClassName"] == "gvisor");
    CHECK(shapeKey(shape) != shapeKey(RunPodShape{}));
    shape.runtimeClass = "Not_A_Name";
    CHECK_THROWS_WITH(validateRunPodShape(shape), Catch::Contains("--runtime-class"));
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
    // run --pool --keep: no claimer to outlive, so no reaper takes it for a leftover.
    const json kept = json::parse(claimPatch("host/1/ab", 200, true));
    CHECK(kept[3] == json({{"op", "add"},
                           {"path", "/metadata/annotations/rossoctl.dev~1kept"},
                           {"value", "true"}}));
    CHECK(kept.dump().find("claimed-by") == std::string::npos);
    json pod = {{"metadata",
                 {{"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}, {kRunLabel, "true"}}},
                  {"annotations", {{kKeptAnnotation, "true"}}}}},
                {"status", {{"phase", "Running"}}}};
    CHECK_FALSE(isLeftoverRunPod(pod, [](const std::string&) { return false; }));
}

TEST_CASE("the run command line passes arguments as words and no env value", "[run]") {
    const auto argv = runCommandLine("/workspace", {"python3", "-c", "print('$HOME')"});
    REQUIRE(argv.size() == 8);
    CHECK(argv[0] == "sh");
    CHECK(argv[4] == "/workspace");
    CHECK(argv[5] == "python3");
    CHECK(argv[7] == "print('$HOME')");
    CHECK_THAT(argv[2], !Catch::Contains(".rossoctl-env"));  // none uploaded: not rossoctl's
    CHECK_THAT(runCommandLine("/workspace", {"cat"}, /*stdinFile=*/false, /*envFile=*/true)[2],
               Catch::Contains(". ./.rossoctl-env") && Catch::Contains("rm -f"));
    CHECK_THAT(runCommandLine("/workspace", {"cat"}, /*stdinFile=*/true)[2],
               Catch::Contains("exec 0<.rossoctl-stdin"));
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

TEST_CASE("--env values go in a file the shell reads literally, never in the command", "[run]") {
    const std::string text =
        envFileContent({{"A", "1 2"}, {"SECRET", "it's $(rm -rf /) `x` \\ \"q\"\nnext"}});
    CHECK(text ==
          "export A='1 2'\n"
          "export SECRET='it'\\''s $(rm -rf /) `x` \\ \"q\"\nnext'\n");
    // The shell's own reading gives back every byte.
    rossoctl::testing::TempDir dir;
    const std::string file = dir.write("env", text);
    FILE* shell = ::popen((". " + file + " && printf %s \"$SECRET\"").c_str(), "r");
    REQUIRE(shell != nullptr);
    std::string value;
    for (int c; (c = std::fgetc(shell)) != EOF;) value += static_cast<char>(c);
    ::pclose(shell);
    CHECK(value == "it's $(rm -rf /) `x` \\ \"q\"\nnext");
}

TEST_CASE("-o json output is capped and says how much was dropped", "[run]") {
    auto out = CappedText::withLimit(5);
    out.append("abc");
    out.append("defgh");
    CHECK(out.text == "abcde");
    CHECK(out.dropped == 3);
    RunOutcome outcome;
    const json result = runResultJson(outcome, out, "err");
    CHECK(result["stdout"] == "abcde");
    CHECK(result["stdoutTruncated"] == true);
    CHECK(result["stdoutDroppedBytes"] == 3);
    CHECK_FALSE(result.contains("stderrTruncated"));
}

namespace {

std::string shellQuoted(const std::string& word) {
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// Runs argv here, as the pod's sh would, with `stdinFile` as its stdin: {exit status, stdout}.
std::pair<int, std::string> runHere(const std::vector<std::string>& argv,
                                    const std::string& stdinFile) {
    std::string line;
    for (const auto& word : argv) line += shellQuoted(word) + " ";
    line += "< " + shellQuoted(stdinFile) + " 2>/dev/null";
    FILE* shell = ::popen(line.c_str(), "r");
    REQUIRE(shell != nullptr);
    std::string out;
    for (int c; (c = std::fgetc(shell)) != EOF;) out += static_cast<char>(c);
    const int status = ::pclose(shell);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST_CASE("the upload is read by its length: stdin that never ends does not hold the run",
          "[run]") {
    // containerd can drop bytes in flight when stdin is half-closed (containerd#12734), so
    // rossoctl never half-closes it: the wrapper must stop at the archive's end by itself.
    rossoctl::testing::TempDir dir;
    std::filesystem::create_directory(dir.file("w"));
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addFile(kStdinFileName, "print(6 * 7)\n", 0600);
    writer.addFile("in.txt", "from a file\n");
    const UploadShape upload = endUpload(writer, archive, uploadEndMarker(1, 2));
    CHECK(rossoctl::testing::runHereWithOpenStdin(
              uploadAndRunCommandLine(dir.file("w"), {"sh", "-c", "cat; ls -a"}, upload,
                                      /*stdinFile=*/true),
              archive) == std::pair<int, std::string>{0, "print(6 * 7)\n.\n..\nin.txt\nout\n"});

    std::filesystem::create_directory(dir.file("v"));
    CHECK(rossoctl::testing::runHereWithOpenStdin(uploadCommandLine(dir.file("v"), upload),
                                                  archive) == std::pair<int, std::string>{0, ""});
    CHECK(std::filesystem::exists(dir.file("v") + "/in.txt"));
    CHECK_FALSE(std::filesystem::exists(dir.file("v") + "/" + upload.endMarker));
}

TEST_CASE("an upload cut at an entry's header fails with 125 before the code runs", "[run]") {
    // tar takes an archive cut at a header as whole (review 44 finding 10): the end marker,
    // the archive's last entry, is what says it all arrived.
    rossoctl::testing::TempDir dir;
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addFile(kEnvFileName, envFileContent({{"GREETING", "hi"}}), 0600);
    writer.addFile("in.txt", "from a file\n");
    const size_t cut = archive.size();
    const UploadShape upload = endUpload(writer, archive, uploadEndMarker(1, 2));
    for (const char* name : {"whole", "cut"}) {
        std::filesystem::create_directory(dir.file(name));
        const auto argv =
            uploadAndRunCommandLine(dir.file(name), {"sh", "-c", "echo \"$GREETING\"; ls"}, upload,
                                    /*stdinFile=*/false, /*envFile=*/true);
        const bool whole = std::string(name) == "whole";
        CHECK(runHere(argv, dir.write(std::string(name) + ".tar",
                                      whole ? archive : archive.substr(0, cut))) ==
              (whole ? std::pair<int, std::string>{0, "hi\nin.txt\nout\n"}
                     : std::pair<int, std::string>{125, ""}));
    }
    std::filesystem::create_directory(dir.file("alone"));
    CHECK(runHere(uploadCommandLine(dir.file("alone"), upload),
                  dir.write("alone.tar", archive.substr(0, cut)))
              .first == 125);
}

TEST_CASE("one exec unpacks the uploaded files and env, then runs the command on /dev/null",
          "[run]") {
    rossoctl::testing::TempDir dir;
    std::filesystem::create_directory(dir.file("w"));
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addFile(kEnvFileName, envFileContent({{"GREETING", "hi 'there'"}}), 0600);
    writer.addFile("in.txt", "from a file\n");
    const UploadShape upload = endUpload(writer, archive, uploadEndMarker(1, 2));
    const auto argv = uploadAndRunCommandLine(
        dir.file("w"), {"sh", "-c", "echo \"$GREETING\"; cat in.txt; cat; ls -a"}, upload,
        /*stdinFile=*/false, /*envFile=*/true);
    // The env file is read and removed before the code starts; the tar is not its stdin.
    CHECK(runHere(argv, dir.write("upload.tar", archive)) ==
          std::pair<int, std::string>{0, "hi 'there'\nfrom a file\n.\n..\nin.txt\nout\n"});
    // An upload that does not unpack is rossoctl's failure: the code never runs.
    CHECK(runHere(uploadAndRunCommandLine(dir.file("w"), {"echo", "ran"}, {1024, "m", {}}),
                  dir.write("bad.tar", std::string(1024, 'x'))) ==
          std::pair<int, std::string>{125, ""});
}
