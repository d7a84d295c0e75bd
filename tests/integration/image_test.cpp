// Real images on the local node (tests/cluster/images): an unknown reference fails as a
// kubelet's pull does, each container runs on its own writable layer above the image,
// readOnlyRootFilesystem and runAsNonRoot hold against the image, and rossoctl stops early
// when an image cannot be pulled.
#include <catch2/catch.hpp>
#include <chrono>

#include "harness.hpp"

using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

harness::RunResult kubectl(const std::vector<std::string>& args, const std::string& input = {}) {
    std::vector<std::string> argv{harness::kubectlPath(), "--kubeconfig",
                                  harness::kubeconfigPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    return harness::run(argv, input);
}

void applyManifest(const std::string& ns, const std::string& yaml) {
    auto result = kubectl({"apply", "-n", ns, "-f", "-"}, yaml);
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
}

void waitReady(const std::string& ns, const std::string& what) {
    auto result = kubectl({"wait", "-n", ns, "--for=condition=Ready", what, "--timeout=90s"});
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
}

harness::RunResult execIn(const std::string& ns, const std::string& pod,
                          const std::string& script) {
    return kubectl({"exec", "-n", ns, pod, "--", "sh", "-c", script});
}

// Its container without NET_RAW: one that keeps it leaves every sandbox verified meanwhile
// unproven (attack 65 N2).
std::string pod(const std::string& name, const std::string& image, std::string containerExtra = {},
                const std::string& specExtra = {}) {
    const std::string context = "securityContext: {";
    const std::string noRaw = "capabilities: {drop: [NET_RAW]}";
    if (const auto at = containerExtra.find(context); at != std::string::npos)
        containerExtra.insert(at + context.size(), noRaw + ", ");
    else
        containerExtra += ", " + context + noRaw + "}";
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n" + specExtra +
           "  containers: [{name: main, image: '" + image + "'" + containerExtra + "}]\n";
}

json waitingOf(const std::string& ns, const std::string& name) {
    auto object = harness::admin().getIfExists(resources::pods(), ns, name);
    if (!object) return json::object();
    for (const auto& status : (*object)["status"].value("containerStatuses", json::array()))
        return status.value("state", json::object()).value("waiting", json::object());
    return json::object();
}

// Waits for the container to wait with `reason`; returns its message.
std::string waitForReason(const std::string& ns, const std::string& name, const std::string& reason,
                          int seconds = 60) {
    std::string message;
    bool seen = harness::eventually(
        [&] {
            const json waiting = waitingOf(ns, name);
            message = waiting.value("message", "");
            return waiting.value("reason", "") == reason;
        },
        seconds);
    INFO("pod " << name << " waiting " << reason << ": " << waitingOf(ns, name).dump());
    REQUIRE(seen);
    return message;
}

std::string eventsOf(const std::string& ns, const std::string& name) {
    return kubectl({"get", "events", "-n", ns, "--field-selector", "involvedObject.name=" + name,
                    "-o", "custom-columns=R:.reason,M:.message", "--no-headers"})
        .out;
}

long secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                            start)
        .count();
}

}  // namespace

TEST_CASE("an unknown image fails to pull as on a kubelet: ErrImagePull, then back-off",
          "[node][image]") {
    harness::TestNamespace ns("image-pull");
    applyManifest(
        ns.name(),
        pod("missing", "rossoctl.test/no-such-image:1", ", command: [\"true\"]") + "---\n" +
            pod("never", "no-such-image:2", ", command: [\"true\"], imagePullPolicy: Never") +
            "---\n" + pod("known", "docker.io/library/busybox:1.36"));
    // ErrImagePull lasts until the next sync (about a second), then the back-off shows.
    waitForReason(ns.name(), "missing", "ImagePullBackOff");
    REQUIRE(harness::eventually(
        [&] { return eventsOf(ns.name(), "missing").find("BackOff") != std::string::npos; }, 30));
    const std::string events = eventsOf(ns.name(), "missing");
    INFO(events);
    CHECK_THAT(events, Catch::Contains("Failed to pull image \"rossoctl.test/no-such-image:1\""));
    CHECK_THAT(events, Catch::Contains("rossoctl.test/no-such-image:1: not found"));
    CHECK_THAT(events, Catch::Contains("Error: ErrImagePull"));
    CHECK_THAT(events, Catch::Contains("Back-off pulling image"));
    CHECK_THAT(waitForReason(ns.name(), "never", "ErrImageNeverPull"),
               Catch::Contains("pull policy of Never"));
    // With and without docker.io/library/, a store image starts with the image's own Cmd:
    // pulled from the node's registry at its first use, present on the node after that.
    waitReady(ns.name(), "pod/known");
    CHECK_THAT(eventsOf(ns.name(), "known"),
               Catch::Contains("already present on machine") ||
                   Catch::Contains("Successfully pulled image \"docker.io/library/busybox:1.36\""));
}

TEST_CASE(
    "each container writes to its own layer: a root filesystem file is gone after a "
    "restart, the image is unchanged",
    "[node][image]") {
    harness::TestNamespace ns("image-layer");
    // The container reports a file left by its previous run, then leaves one and exits.
    applyManifest(ns.name(),
                  pod("layer", "busybox:1.36",
                      ", command: [sh, -c, 'cat /etc/left 2>/dev/null || echo clean; echo run >"
                      " /etc/left; echo changed > /bin/busybox-note; sleep 2']"));
    REQUIRE(harness::eventually(
        [&] {
            auto object = harness::admin().getIfExists(resources::pods(), ns.name(), "layer");
            if (!object) return false;
            for (const auto& status : (*object)["status"].value("containerStatuses", json::array()))
                if (status.value("restartCount", 0) >= 1 &&
                    status.value("state", json::object()).contains("running"))
                    return true;
            return false;
        },
        90));
    auto logs = kubectl({"logs", "-n", ns.name(), "layer"});
    CHECK(logs.out == "clean\n");
    auto previous = kubectl({"logs", "-n", ns.name(), "layer", "--previous"});
    CHECK(previous.out == "clean\n");

    // Another pod of the same image does not see what the first one wrote.
    applyManifest(ns.name(), pod("other", "busybox:1.36", ", command: [sleep, '3600']"));
    waitReady(ns.name(), "pod/other");
    CHECK(
        execIn(ns.name(), "other", "test -e /etc/left || test -e /bin/busybox-note; echo $?").out ==
        "1\n");
}

TEST_CASE(
    "readOnlyRootFilesystem holds on the image; runAsNonRoot is checked against the "
    "image's user",
    "[node][image]") {
    harness::TestNamespace ns("image-user");
    applyManifest(
        ns.name(),
        pod("readonly", "debian:12-slim",
            ", command: [sleep, '3600'], securityContext: {readOnlyRootFilesystem: true}") +
            "---\n" +
            pod("rootimage", "debian:12-slim",
                ", command: [sleep, '3600'], securityContext: {runAsNonRoot: true}") +
            "---\n" +
            pod("nonrootimage", "gcr.io/distroless/static:nonroot",
                ", securityContext: {runAsNonRoot: true}") +
            "---\n" + pod("imageuser", "curlimages/curl:8", ", command: [sleep, '3600']"));
    waitReady(ns.name(), "pod/readonly");
    auto write = execIn(ns.name(), "readonly", "echo x > /tmp/x; echo x > /x");
    CHECK(write.exitCode != 0);
    CHECK_THAT(write.err, Catch::Contains("Read-only file system"));

    CHECK_THAT(waitForReason(ns.name(), "rootimage", "CreateContainerConfigError"),
               Catch::Contains("runAsNonRoot and image will run as root"));
    // distroless's nonroot user (65532) satisfies runAsNonRoot without a runAsUser.
    waitReady(ns.name(), "pod/nonrootimage");
    auto noShell = kubectl({"exec", "-n", ns.name(), "nonrootimage", "--", "sh", "-c", "true"});
    CHECK(noShell.exitCode != 0);
    CHECK_THAT(noShell.err, Catch::Contains("executable file not found"));
    // The image's User and WorkingDir apply when the pod does not say otherwise.
    waitReady(ns.name(), "pod/imageuser");
    CHECK(execIn(ns.name(), "imageuser", "id -u; pwd").out == "100\n/home/curl_user\n");
}

TEST_CASE("rossoctl stops at once when an image cannot be pulled", "[node][image]") {
    harness::TestNamespace project("image-rossoctl", /*create=*/false);
    const std::string ns = project.name();
    auto created = harness::rossoctl({"project", "create", ns});
    REQUIRE(created.exitCode == 0);

    SECTION("agents wait") {
        REQUIRE(
            harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                               "--name", "typo", "--containerImage", "pythn:3.12-slim", "-n", ns})
                .exitCode == 0);
        const auto start = std::chrono::steady_clock::now();
        auto result = harness::rossoctl({"agents", "wait", "typo", "--timeout", "2m", "-n", ns});
        INFO(result.out << result.err);
        CHECK(result.exitCode == 1);
        CHECK_THAT(result.err, Catch::Contains("image pythn:3.12-slim cannot be pulled ("));
        CHECK(secondsSince(start) < 60);
    }

    SECTION("sandbox run (125: rossoctl, not the command, failed)") {
        const auto start = std::chrono::steady_clock::now();
        auto result = harness::rossoctl(
            {"sandbox", "run", "-n", ns, "--image", "no-such-image:1", "--", "true"});
        INFO(result.out << result.err);
        CHECK(result.exitCode == 125);
        CHECK_THAT(result.err, Catch::Contains("image no-such-image:1 cannot be pulled"));
        CHECK(secondsSince(start) < 60);
    }

    SECTION("sandbox restart") {
        REQUIRE(harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                                   "--name", "good", "--containerImage", "busybox:1.36", "-n", ns})
                    .exitCode == 0);
        REQUIRE(
            harness::rossoctl({"agents", "wait", "good", "--timeout", "90s", "-n", ns}).exitCode ==
            0);
        auto patched = kubectl(
            {"patch", "sandboxes.agents.x-k8s.io", "good", "-n", ns, "--type=json", "-p",
             R"([{"op":"replace","path":"/spec/podTemplate/spec/containers/0/image","value":"busybox:9.99"}])"});
        INFO(patched.err);
        REQUIRE(patched.exitCode == 0);
        const auto start = std::chrono::steady_clock::now();
        auto result =
            harness::rossoctl({"sandbox", "restart", "good", "--timeout", "2m", "-n", ns});
        INFO(result.out << result.err);
        CHECK(result.exitCode == 1);
        CHECK_THAT(result.err, Catch::Contains("image busybox:9.99 cannot be pulled ("));
        CHECK(secondsSince(start) < 60);
    }
}
