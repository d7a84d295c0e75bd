// sandbox verify --trusted-probe: the egress probe runs in an ephemeral container the agent
// cannot touch. A pod whose own curl lies ("could not connect") fools the probe run from the
// pod, not the trusted one.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/verify/probe_site.hpp"
#include "verify_report.hpp"

using harness::checkNamed;
using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

// curl in an image of its own: the local node builds it (tests/cluster/README.md, Images).
constexpr const char* kProbeImage = "curlimages/curl:8";

// A hardened sandbox whose agent put a liar first on PATH: curl and cat that report denial.
json liarSandbox(const std::string& ns, const std::string& name) {
    rossoctl::model::SandboxOptions options;
    options.name = name;
    options.namespaceName = ns;
    options.pod.image = "busybox";
    options.gateImage = harness::projectGateImage(ns);
    options.shutdownTime = std::chrono::system_clock::now() + std::chrono::hours(1);
    json sandbox = rossoctl::model::buildSandbox(options, std::chrono::system_clock::now());
    auto& container = sandbox["spec"]["podTemplate"]["spec"]["containers"][0];
    container["command"] = {
        "sh", "-c",
        "mkdir -p /tmp/bin && "
        "printf '#!/bin/sh\\necho \"curl: (7) Failed to connect: Connection refused\" >&2\\n"
        "exit 7\\n' > /tmp/bin/curl && "
        "printf '#!/bin/sh\\necho \"cat: $1: No such file or directory\" >&2\\nexit 1\\n' "
        "> /tmp/bin/cat && chmod +x /tmp/bin/curl /tmp/bin/cat && exec sleep infinity"};
    container["env"] =
        json::array({{{"name", "PATH"}, {"value", "/tmp/bin:/usr/local/bin:/usr/bin:/bin"}}});
    return sandbox;
}

std::string joined(const json& lines) {
    std::string text;
    for (const auto& line : lines) text += line.get<std::string>() + "\n";
    return text;
}

}  // namespace

TEST_CASE("sandbox verify --trusted-probe runs the probe in an ephemeral container",
          "[trusted-probe]") {
    // No NetworkPolicy: egress is open, whatever the pod's tools say.
    harness::TestNamespace open("trusted");
    harness::createCountedQuota(open.name(),
                                {{"apiVersion", "v1"},
                                 {"kind", "ResourceQuota"},
                                 {"metadata", {{"name", "quota"}}},
                                 {"spec", {{"hard", {{"pods", "5"}, {"limits.memory", "4Gi"}}}}}});
    const auto sandboxes = resources::sandboxes("v1beta1");
    harness::admin().create(sandboxes, open.name(), liarSandbox(open.name(), "liar"));
    json shared = liarSandbox(open.name(), "shared");
    shared["spec"]["podTemplate"]["spec"]["shareProcessNamespace"] = true;
    harness::admin().create(sandboxes, open.name(), shared);
    for (const char* name : {"liar", "shared"})
        REQUIRE(harness::eventually(
            [&] {
                auto sandbox = harness::admin().getIfExists(sandboxes, open.name(), name);
                return sandbox && rossoctl::model::sandboxReady(*sandbox);
            },
            120));
    const std::string outside = harness::outsideUrl();
    auto verify = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{"sandbox",      "verify",          "liar",  "-n", open.name(),
                                      "--no-restart", "--egress-target", outside, "-o", "json"};
        args.insert(args.end(), extra.begin(), extra.end());
        return harness::rossoctl(args);
    };

    SECTION("from the pod the lie is believed; the trusted probe finds the open egress") {
        auto fromPod = verify({});
        INFO(fromPod.out << fromPod.err);
        const auto podEgress = checkNamed(json::parse(fromPod.out), "egress");
        CHECK(podEgress["live"]["evidence"][0] ==
              "ran in the pod, with the pod's own tools: from the pod, forgeable (the agent "
              "shares its processes and user)");
        // The liar's curl is on its own PATH, never the probe's: the image's curl connects.
        CHECK(podEgress["live"]["result"] == "fail");

        const auto started = std::chrono::steady_clock::now();
        auto trusted = verify({"--trusted-probe", kProbeImage});
        const auto took = std::chrono::steady_clock::now() - started;
        INFO(trusted.out << trusted.err);
        CHECK(trusted.exitCode == 3);
        const auto report = json::parse(trusted.out);
        const auto& egress = checkNamed(report, "egress");
        CHECK(egress["live"]["evidence"][0] == std::string("ran in a trusted probe container (") +
                                                   kProbeImage + "), not with the pod's tools");
        CHECK(egress["live"]["result"] == "fail");
        CHECK_THAT(joined(egress["live"]["evidence"]), Catch::Contains("connected"));
        // The other live parts still come from the pod, and say so.
        CHECK_THAT(checkNamed(report, "limits")["live"]["evidence"][0].get<std::string>(),
                   Catch::Contains("from the pod, forgeable"));
        WARN("verify --trusted-probe: "
             << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");

        // The node reports the ephemeral container in the pod, ended by verify at its end (its
        // shell's TERM trap: exit 0), so no probe outlives the run in the pod it kept.
        CHECK(harness::eventually(
            [&] {
                const auto pod = harness::admin().get(resources::pods(), open.name(), "liar");
                for (const auto& status :
                     pod["status"].value("ephemeralContainerStatuses", json::array()))
                    if (status["name"].get<std::string>().rfind("rossoctl-probe-", 0) == 0 &&
                        status["state"].contains("terminated") &&
                        status["state"]["terminated"].value("exitCode", -1) == 0)
                        return true;
                return false;
            },
            20));
    }

    SECTION("the probe ends on the pod's TERM, not on the KILL at the grace period's end") {
        // A bare `sleep` as PID 1 ignores TERM: verify's restart waited out the pod's whole
        // grace period (the walkthrough's 33.6 s against 3 s). Exit code 0, not 137, says which.
        REQUIRE(verify({"--trusted-probe", kProbeImage}).exitCode == 3);
        const auto pod = harness::admin().get(resources::pods(), open.name(), "liar");
        rossoctl::kube::ListOptions from;
        from.resourceVersion = pod["metadata"]["resourceVersion"].get<std::string>();
        from.fieldSelector = "metadata.name=liar";
        rossoctl::kube::DeleteOptions grace;
        grace.gracePeriodSeconds = 5;
        harness::admin().remove(resources::pods(), open.name(), "liar", grace);
        std::optional<int> probeExit;
        harness::admin().watch(
            resources::pods(), open.name(), from,
            [&](const rossoctl::kube::WatchEvent& event) {
                const auto& status = event.object.value("status", json::object());
                for (const auto& entry : status.value("ephemeralContainerStatuses", json::array()))
                    if (entry["state"].contains("terminated"))
                        probeExit = entry["state"]["terminated"].value("exitCode", -1);
                return event.type != "DELETED";
            },
            std::chrono::seconds(60));
        REQUIRE(probeExit.has_value());
        CHECK(*probeExit == 0);
    }

    SECTION("attack 61 L3: a container shaped as verify's trusted probe is another's") {
        // Anyone who may add ephemeral containers can copy the probe's shape; an exec into it
        // runs with no limit. verify adds its own after reading the pod: this one is not it.
        rossoctl::verify::TrustedProbeOptions options;
        options.image = kProbeImage;
        const json patch = {
            {"spec",
             {{"ephemeralContainers", json::array({rossoctl::verify::trustedProbeContainer(
                                          "rossoctl-probe-a1b2c3", options)})}}}};
        harness::admin().request("PATCH",
                                 rossoctl::kube::objectPath(resources::pods(), open.name(), "liar",
                                                            "ephemeralcontainers"),
                                 patch.dump(), "application/strategic-merge-patch+json", false);
        REQUIRE(harness::eventually(
            [&] {
                const auto pod =
                    harness::admin().getIfExists(resources::pods(), open.name(), "liar");
                if (!pod) return false;
                for (const auto& entry : pod->value("status", json::object())
                                             .value("ephemeralContainerStatuses", json::array()))
                    if (entry.value("name", "") == "rossoctl-probe-a1b2c3" &&
                        entry.value("state", json::object()).contains("running"))
                        return true;
                return false;
            },
            60));
        auto result = verify({"--trusted-probe", kProbeImage});
        INFO(result.out << result.err);
        CHECK(result.exitCode == 3);
        const json report = json::parse(result.out);
        const auto& limits = checkNamed(report, "limits");
        CHECK(limits["live"]["result"] == "unproven");
        CHECK_THAT(joined(limits["live"]["evidence"]),
                   Catch::Contains("ephemeral container rossoctl-probe-a1b2c3") &&
                       !Catch::Contains("verify's own trusted probe"));
    }

    SECTION("a pod sharing its process namespace gets no trusted probe: unproven, never a pass") {
        auto result = harness::rossoctl({"sandbox", "verify", "shared", "-n", open.name(),
                                         "--no-restart", "--egress-target", outside,
                                         "--trusted-probe", kProbeImage, "-o", "json"});
        INFO(result.out << result.err);
        CHECK(result.exitCode == 3);
        const json report = json::parse(result.out);  // kept: checkNamed returns a reference
        const auto& egress = checkNamed(report, "egress");
        CHECK(egress["live"]["result"] == "unproven");
        CHECK_THAT(joined(egress["live"]["evidence"]), Catch::Contains("shareProcessNamespace"));
    }

    SECTION("RBAC without pods/ephemeralcontainers is a clear error, never a pass") {
        const std::string ns = open.name();
        harness::admin().create(
            {"rbac.authorization.k8s.io", "v1", "roles", "Role", true}, ns,
            {{"apiVersion", "rbac.authorization.k8s.io/v1"},
             {"kind", "Role"},
             {"metadata", {{"name", "verify-without-debug"}}},
             {"rules", json::array({{{"apiGroups", {"agents.x-k8s.io"}},
                                     {"resources", {"sandboxes"}},
                                     {"verbs", {"get", "list", "watch"}}},
                                    {{"apiGroups", {""}},
                                     {"resources", {"pods", "serviceaccounts", "resourcequotas"}},
                                     {"verbs", {"get", "list", "watch"}}},
                                    {{"apiGroups", {""}},
                                     {"resources", {"pods/exec"}},
                                     {"verbs", {"create", "get"}}},
                                    {{"apiGroups", {"networking.k8s.io"}},
                                     {"resources", {"networkpolicies"}},
                                     {"verbs", {"get", "list"}}}})}});
        harness::admin().create(
            {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true}, ns,
            {{"apiVersion", "rbac.authorization.k8s.io/v1"},
             {"kind", "RoleBinding"},
             {"metadata", {{"name", "verify-without-debug"}}},
             {"roleRef",
              {{"apiGroup", "rbac.authorization.k8s.io"},
               {"kind", "Role"},
               {"name", "verify-without-debug"}}},
             {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                        {"kind", "User"},
                                        {"name", "limited"}}})}});
        auto result =
            harness::rossoctl({"sandbox", "verify", "liar", "-n", ns, "--no-restart",
                               "--egress-target", outside, "--trusted-probe", kProbeImage},
                              {}, {{"KUBECONFIG", harness::limitedKubeconfigPath()}});
        INFO(result.out << result.err);
        CHECK(result.exitCode == 1);
        CHECK_THAT(result.err, Catch::Contains("pods/ephemeralcontainers") &&
                                   Catch::Contains("without --trusted-probe"));
        CHECK(result.out.find("pass") == std::string::npos);
    }
}

namespace {

// Whether every ephemeral container of the sandbox's pod has ended.
bool probesEnded(const std::string& ns, const std::string& pod) {
    auto current = harness::admin().getIfExists(resources::pods(), ns, pod);
    if (!current) return false;
    const json statuses = (*current)["status"].value("ephemeralContainerStatuses", json::array());
    if (statuses.empty()) return false;
    for (const auto& status : statuses)
        if (!status["state"].contains("terminated")) return false;
    return true;
}

}  // namespace

TEST_CASE(
    "verify ends its trusted probes: a later verify, with no probe or another image, "
    "finds no unbounded container",
    "[trusted-probe]") {
    harness::TestNamespace project("trusted-end", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    harness::admin().create(harness::sandboxRef(), ns, harness::smallSandbox(ns, "twice"));
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "twice"); }, 180));
    const std::string outside = harness::outsideUrl();
    auto verify = [&](std::vector<std::string> extra) {
        std::vector<std::string> args{"sandbox", "verify", "twice",           "-n",   ns,
                                      "-o",      "json",   "--egress-target", outside};
        args.insert(args.end(), extra.begin(), extra.end());
        auto result = harness::rossoctl(args, {}, {}, 300);
        INFO(result.out << result.err);
        json report = json::parse(result.out, nullptr, false);
        REQUIRE(report.is_object());
        return report;
    };
    // With its restart: the replacement pod gets a probe of its own (attack 55 E6).
    verify({"--trusted-probe", "busybox:1.36"});
    CHECK(harness::eventually([&] { return probesEnded(ns, "twice"); }, 20));
    // The stop-52 probe slept 10 minutes: an unbounded container this run does not trust.
    const json plain = verify({"--no-restart"});
    INFO(plain.dump(2));
    CHECK(harness::checkNamed(plain, "limits")["result"] == "pass");
    CHECK_THAT(harness::evidenceOf(harness::checkNamed(plain, "limits")),
               Catch::Contains("has ended (it never restarts): nothing to limit"));
    // Without a restart the pod keeps running; its probe must not.
    verify({"--no-restart", "--trusted-probe", "busybox:1.36"});
    CHECK(harness::eventually([&] { return probesEnded(ns, "twice"); }, 20));
    const json other = verify({"--no-restart", "--trusted-probe", kProbeImage});
    INFO(other.dump(2));
    CHECK(harness::checkNamed(other, "limits")["result"] == "pass");
}

// Attack 60 L1, L2: ephemeral containers someone else added. One mounts a volume of the pod
// over /sys/fs/cgroup and writes "limits" there; one waits for an image and runs unlimited once
// it comes. Neither declares a limit (the API allows none), and neither's own reading counts.
TEST_CASE(
    "sandbox verify: another's ephemeral containers leave limits unproven, however they "
    "read",
    "[trusted-probe]") {
    harness::TestNamespace project("verify60-ephemeral", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    harness::admin().create(harness::sandboxRef(), ns,
                            harness::smallSandbox(ns, "lim", "busybox:1.36"));
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "lim"); }, 180));
    const json pod = harness::admin().get(resources::pods(), ns, "lim");
    const std::string volume = pod["spec"]["volumes"][0].value("name", "");
    REQUIRE(!volume.empty());
    const std::string custom =
        (std::filesystem::temp_directory_path() / ("rossoctl-" + ns + "-custom.json")).string();
    {
        std::ofstream file(custom);
        file
            << json{{"volumeMounts", {{{"name", volume}, {"mountPath", "/sys/fs/cgroup"}}}}}.dump();
    }
    const auto debug = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv{harness::kubectlPath(),
                                      "--kubeconfig",
                                      harness::kubeconfigPath(),
                                      "debug",
                                      "lim",
                                      "-n",
                                      ns,
                                      "--profile=restricted"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto added = harness::run(argv);
        INFO(added.out << added.err);
        REQUIRE(added.exitCode == 0);
    };
    debug({"--image=busybox:1.36", "--container=worker", "--custom=" + custom, "--", "sh", "-c",
           "echo 268435456 > /sys/fs/cgroup/memory.max; echo '25000 100000' > "
           "/sys/fs/cgroup/cpu.max; exec sleep 600"});
    debug({"--image=rossoctl.invalid/never:1", "--image-pull-policy=Never", "--container=late",
           "--", "sleep", "600"});
    REQUIRE(harness::eventually(
        [&] {
            const json now = harness::admin().get(resources::pods(), ns, "lim");
            for (const auto& status :
                 now["status"].value("ephemeralContainerStatuses", json::array()))
                if (status.value("name", "") == "worker")
                    return status["state"].contains("running");
            return false;
        },
        120));
    // The forged files are there: what the worker's reading would have shown.
    const auto forged =
        harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(), "exec",
                      "-n", ns, "lim", "-c", "worker", "--", "cat", "/sys/fs/cgroup/memory.max"});
    CHECK(forged.out == "268435456\n");
    const auto [result, report] = harness::verifyTrusted(ns, "lim");
    INFO(result.out << result.err);
    const json& limits = checkNamed(report, "limits");
    CHECK(limits["live"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(limits),
               Catch::Contains("ephemeral container worker runs: the API gives it no limits of "
                               "its own") &&
                   Catch::Contains("ephemeral container late has not ended") &&
                   !Catch::Contains("a limit of its own cgroup"));
    CHECK(result.exitCode == 3);
    std::filesystem::remove(custom);
}
