// sandbox cp and gc against the local cluster: byte-identical copies both ways through tar
// (python:3.12-slim) and through sh + cat alone (the local debian:12-slim has no tar), a hostile
// tree in the pod, and one leak of each kind that gc finds, lists and deletes.
#include <fmt/format.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "harness.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/model/sandbox.hpp"

using nlohmann::json;
using namespace rossoctl;
namespace fs = std::filesystem;

namespace {

void importSandbox(const std::string& ns, const std::string& name, const std::string& image) {
    auto created =
        harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                           "--name", name, "--containerImage", image, "-n", ns});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    auto ready = harness::rossoctl({"agents", "wait", name, "-n", ns, "--timeout", "120s"});
    INFO(ready.out << ready.err);
    REQUIRE(ready.exitCode == 0);
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path& path, const std::string& content, mode_t mode = 0644) {
    std::ofstream(path, std::ios::binary) << content;
    ::chmod(path.c_str(), mode);
}

unsigned modeOf(const fs::path& path) {
    struct stat info {};
    ::lstat(path.c_str(), &info);
    return info.st_mode & 07777;
}

// Every entry below dir: "path type mode [link target | content size]", sorted.
std::vector<std::string> describeTree(const fs::path& dir) {
    std::vector<std::string> lines;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::end(it); ++it) {
        const std::string rel = it->path().lexically_relative(dir).string();
        if (it->is_symlink())
            lines.push_back(rel + " link " + fs::read_symlink(it->path()).string());
        else if (it->is_directory())
            lines.push_back(rel + " dir " + std::to_string(modeOf(it->path())));
        else
            lines.push_back(rel + " file " + std::to_string(modeOf(it->path())) + " " +
                            std::to_string(readFile(it->path()).size()));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

harness::RunResult cp(const std::string& ns, const std::string& from, const std::string& to,
                      const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"sandbox", "cp", from, to, "-n", ns};
    args.insert(args.end(), extra.begin(), extra.end());
    return harness::rossoctl(args);
}

}  // namespace

TEST_CASE("sandbox cp: a binary file and a directory both ways, with tar and with sh and cat only",
          "[cp]") {
    harness::TestNamespace project("cp");
    const std::string ns = project.name();
    importSandbox(ns, "withtar", "python:3.12-slim");
    importSandbox(ns, "notar", "debian:12-slim");
    auto tar = harness::rossoctl(
        {"sandbox", "exec", "notar", "-n", ns, "--", "sh", "-c", "command -v tar || echo absent"});
    REQUIRE(tar.out == "absent\n");  // the path without tar is the one taken below

    const fs::path local = fs::temp_directory_path() / ("rossoctl-cp-" + ns);
    fs::create_directories(local / "src/sub");
    fs::create_directories(local / "src/empty");
    std::mt19937 random(42);
    std::string binary(300 * 1024, '\0');
    for (auto& byte : binary) byte = static_cast<char>(random() & 0xFF);
    writeFile(local / "src/bin.dat", binary);
    writeFile(local / "src/sub/run.sh", "#!/bin/sh\necho hi\n", 0755);
    writeFile(local / "src/.hidden", "dot\n", 0600);
    fs::create_symlink("../bin.dat", local / "src/sub/link");
    const auto original = describeTree(local / "src");

    for (const std::string sandbox : {"withtar", "notar"}) {
        INFO(sandbox);
        auto up = cp(ns, (local / "src").string(), sandbox + ":/workspace");
        INFO(up.err);
        REQUIRE(up.exitCode == 0);
        CHECK(up.err.find("copied 3 files, 307,222 bytes") != std::string::npos);
        CHECK((up.err.find("no tar") != std::string::npos) == (sandbox == "notar"));
        auto inPod = harness::rossoctl(
            {"sandbox", "exec", sandbox, "-n", ns, "--", "cat", "/workspace/src/bin.dat"});
        CHECK(inPod.out == binary);

        const fs::path back = local / ("back-" + sandbox);
        auto down = cp(ns, sandbox + ":/workspace/src", back.string());
        INFO(down.err);
        REQUIRE(down.exitCode == 0);
        CHECK(describeTree(back) == original);
        CHECK(readFile(back / "bin.dat") == binary);

        const fs::path one = local / ("one-" + sandbox + ".dat");
        REQUIRE(cp(ns, sandbox + ":/workspace/src/bin.dat", one.string()).exitCode == 0);
        CHECK(readFile(one) == binary);

        // An existing local directory is not written into without --force ("src/." names the
        // directory's contents, so the target is `back` itself, not back/src).
        auto again = cp(ns, sandbox + ":/workspace/src/.", back.string());
        CHECK(again.exitCode == 2);
        CHECK(again.err.find("already exists and is not empty; nothing was copied") !=
              std::string::npos);
        auto forced = cp(ns, sandbox + ":/workspace/src/.", back.string(), {"--force"});
        INFO(forced.err);
        CHECK(forced.exitCode == 0);
        CHECK(describeTree(back) == original);
    }

    // The pod is the adversary: links out of the destination and a setuid file.
    for (const std::string sandbox : {"withtar", "notar"}) {
        INFO(sandbox);
        auto planted = harness::rossoctl(
            {"sandbox", "exec", sandbox, "-n", ns, "--", "sh", "-c",
             "mkdir -p /workspace/evil/d && cd /workspace/evil && ln -s ../../.. x && ln -s /etc "
             "abs && ln -s ../../../../../etc/passwd d/up && echo s > suid && chmod 4755 suid && "
             "echo ok > ok.txt && ls -l suid"});
        INFO(planted.out << planted.err);
        REQUIRE(planted.exitCode == 0);
        REQUIRE(planted.out.rfind("-rws", 0) == 0);
        const fs::path box = local / ("hostile-" + sandbox);
        fs::create_directories(box);
        auto got = cp(ns, sandbox + ":/workspace/evil", (box / "dest").string());
        INFO(got.err);
        CHECK(got.exitCode == 1);
        CHECK(got.err.find("x: symlink to ../../.. leaves the directory") != std::string::npos);
        CHECK(got.err.find("abs: symlink to /etc leaves the directory") != std::string::npos);
        CHECK(describeTree(box) == std::vector<std::string>{"dest dir 493", "dest/d dir 493",
                                                            "dest/ok.txt file 420 3",
                                                            "dest/suid file 493 2"});
    }
    fs::remove_all(local);
}

TEST_CASE("gc finds one leak of each kind, --dry-run deletes nothing, then it deletes them",
          "[gc]") {
    harness::TestNamespace project("gc");
    const std::string ns = project.name();
    auto& admin = harness::admin();
    SystemClock clock;
    kube::Discovery discovery(admin, clock, "");
    const auto sandboxes = discovery.sandboxes();
    SystemRandom random;
    // This machine and pid namespace, a pid above any pid_max: surely gone.
    const std::string me = app::run::currentRunOwner(random);
    const auto pid = me.find(";pid=") + 5;
    const std::string deadOwner = me.substr(0, pid) + "4194999" + me.substr(me.find(';', pid));

    model::SandboxOptions expired;
    expired.name = "expired";
    expired.namespaceName = ns;
    expired.version = sandboxes.version;
    expired.pod.image = "busybox:1.36";
    expired.pod.command = {"sleep", "3600"};
    expired.shutdownTime = std::chrono::system_clock::now() + std::chrono::seconds(2);
    admin.create(sandboxes, ns, model::buildSandbox(expired, std::chrono::system_clock::now()));
    // Another operator's expired Sandbox: never rossoctl's to collect.
    expired.name = "theirs";
    json theirs = model::buildSandbox(expired, std::chrono::system_clock::now());
    theirs["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "jupyter-operator"}};
    admin.create(sandboxes, ns, theirs);

    app::run::RunPodShape shape;
    shape.image = "busybox:1.36";
    json pod = app::run::runPodManifest("run-leak", shape, 60);
    pod["metadata"]["annotations"][app::run::kRunOwnerAnnotation] = deadOwner;
    admin.create(kube::resources::pods(), ns, pod);

    const bool claims = discovery.isServed(app::run::kExtensionsGroup);
    if (claims) {
        json claim = app::run::sandboxClaimManifest(
            shape, std::chrono::system_clock::now() + std::chrono::hours(1));
        claim["metadata"]["annotations"][app::run::kRunOwnerAnnotation] = deadOwner;
        admin.create(app::run::sandboxClaims(), ns, claim);
    } else {
        WARN("the agent-sandbox extensions are not served here; no SandboxClaim to leak");
    }
    admin.create(
        kube::resources::agentRuntimes(), ns,
        model::buildAgentRuntime("orphan", ns, {sandboxes.apiVersion(), "Sandbox", "gone"}));
    // Past the sandbox's shutdownTime, and the controllers done with what was just created
    // (a status update between gc's list and its delete would fail the resourceVersion check).
    std::this_thread::sleep_for(std::chrono::seconds(6));
    harness::settledSnapshot(ns);

    auto dry = harness::rossoctl({"gc", "-n", ns, "--dry-run"});
    INFO(dry.out << dry.err);
    REQUIRE(dry.exitCode == 0);
    CHECK(dry.out.find("Sandbox        expired") != std::string::npos);
    CHECK(dry.out.find("past its spec.shutdownTime") != std::string::npos);
    CHECK(dry.out.find("run-leak") != std::string::npos);
    // The owner by its pid, never the raw owner string with its token.
    CHECK(dry.out.find("its rossoctl process (pid 4194999 on this machine) is gone") !=
          std::string::npos);
    CHECK(dry.out.find("token=") == std::string::npos);
    CHECK(dry.out.find("AgentRuntime   orphan") != std::string::npos);
    CHECK(dry.out.find("its target Sandbox/gone is gone") != std::string::npos);
    const size_t leaks = claims ? 4 : 3;
    CHECK((dry.out.find("SandboxClaim") != std::string::npos) == claims);
    CHECK(dry.err == fmt::format("{} objects would be deleted (dry run)\n", leaks));
    CHECK(admin.getIfExists(sandboxes, ns, "expired").has_value());
    CHECK(dry.out.find("theirs") == std::string::npos);
    CHECK(admin.getIfExists(kube::resources::pods(), ns, "run-leak").has_value());
    CHECK(admin.getIfExists(kube::resources::agentRuntimes(), ns, "orphan").has_value());
    if (claims) {
        const auto left = admin.list(app::run::sandboxClaims(), ns);  // kept: items would dangle
        CHECK(left["items"].size() == 1);
    }

    auto real = harness::rossoctl({"gc", "-n", ns});
    INFO(real.out << real.err);
    REQUIRE(real.exitCode == 0);
    CHECK(real.err == fmt::format("deleted {} of {} objects\n", leaks, leaks));
    CHECK(harness::eventually(
        [&] {
            return !admin.getIfExists(sandboxes, ns, "expired") &&
                   !admin.getIfExists(kube::resources::pods(), ns, "run-leak") &&
                   !admin.getIfExists(kube::resources::agentRuntimes(), ns, "orphan") &&
                   (!claims || admin.list(app::run::sandboxClaims(), ns)["items"].empty());
        },
        60));
    CHECK(admin.getIfExists(sandboxes, ns, "theirs").has_value());
    auto after = harness::rossoctl({"gc", "-n", ns});
    CHECK(after.exitCode == 0);
    CHECK(after.err == "Nothing to collect in namespace " + ns + ".\n");
}
