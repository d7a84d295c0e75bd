// Issue 35's pieces one by one: credentials by shape, every container's cgroup, the template's
// pod, who may hold NET_RAW, and tools the pod could have replaced.
#include <catch2/catch.hpp>

#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/probe_site.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;
using rossoctl::testing::verify_fixtures::jwt;

namespace {

json agentToken() {
    return {{"iss", "https://kubernetes.default.svc.cluster.local"},
            {"sub", "system:serviceaccount:team1:agent-bot"},
            {"kubernetes.io", {{"namespace", "team1"}}}};
}

}  // namespace

TEST_CASE("credential shapes: which values are credentials", "[verify]") {
    const std::string issuer = "https://issuer.test";
    CHECK(credentialShape("plain text", issuer).verdict == Verdict::Pass);
    CHECK(credentialShape(jwt(agentToken()), issuer).verdict == Verdict::Fail);
    const auto ours = credentialShape("Bearer " + jwt({{"iss", issuer}, {"sub", "alice"}}), issuer);
    CHECK(ours.verdict == Verdict::Fail);
    CHECK(ours.what == "a JWT issued by this cluster (iss https://issuer.test, sub alice)");
    const auto other = credentialShape(jwt({{"iss", "https://login.example"}}), issuer);
    CHECK(other.verdict == Verdict::Unproven);
    CHECK_THAT(other.what, Catch::Contains("https://login.example"));
    CHECK(credentialShape(jwt({{"iss", "kubernetes/serviceaccount"}}), "").verdict ==
          Verdict::Fail);
    CHECK(credentialShape("eyJhbGciOi.eyJub3Rqc29u.x", issuer).verdict == Verdict::Pass);
    CHECK(credentialShape(R"({"clusters": [], "users": [{"user": {"client-key-data": "x"}}]})",
                          issuer)
              .verdict == Verdict::Fail);
    CHECK(credentialShape("clusters:\n- a\nusers:\n- name: u\n", issuer).verdict ==
          Verdict::Pass);  // no credential in it
}

TEST_CASE("credentials static: env values and every key of the sources the pod reads", "[verify]") {
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["containers"][0]["env"] = json::array(
        {{{"name", "TOKEN"}, {"value", jwt(agentToken())}},
         {{"name", "A"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}},
         {{"name", "B"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "k"}}}}}}});
    pod["spec"]["volumes"].push_back(
        {{"name", "p"},
         {"projected",
          {{"sources", {{{"secret", {{"name", "s"}}}}, {{"configMap", {{"name", "p"}}}}}}}}});
    pod["spec"]["initContainers"] =
        json::array({{{"name", "init"}, {"envFrom", {{{"secretRef", {{"name", "i"}}}}}}}});
    using Source = std::pair<std::string, std::string>;
    CHECK(referencedSources(pod) ==
          std::vector<Source>{
              {"secret", "s"}, {"configmap", "p"}, {"secret", "i"}, {"configmap", "c"}});
    auto envToken = credentialsStatic(pod, {}, "");
    CHECK(envToken.verdict == Verdict::Fail);
    CHECK(mentions(envToken, "container agent env TOKEN holds a Kubernetes service-account token"));
    pod["spec"]["containers"][0]["env"].erase(0);
    const std::vector<CredentialSource> clean = {
        {"secret", "s", json{{"data", {{"k", rossoctl::kube::base64Encode("hello")}}}}, ""},
        {"configmap", "p", json{{"binaryData", {{"b", rossoctl::kube::base64Encode("x")}}}}, ""},
        {"secret", "i", std::nullopt, "not found"},
        {"configmap", "c", json{{"data", {{"k", "v"}}}}, ""}};
    // Before a container starts a missing Secret mounts nothing; once one has, it held what
    // env and files keep (issue 35, review 35).
    json unstarted = pod;
    unstarted.erase("status");
    auto passes = credentialsStatic(unstarted, clean, "");
    CHECK(passes.verdict == Verdict::Pass);
    CHECK(mentions(passes, "secret/i does not exist"));
    CHECK(credentialsStatic(pod, clean, "").verdict == Verdict::Unproven);
    CHECK(mentions(credentialsStatic(pod, clean, ""), "secret/i does not exist now"));
    auto hidden = clean;
    hidden[2] = {"secret", "i", std::nullopt, "secrets \"i\" is forbidden"};
    CHECK(credentialsStatic(pod, hidden, "").verdict == Verdict::Unproven);
    auto binary = clean;
    binary[1].object =
        json{{"binaryData", {{"b", rossoctl::kube::base64Encode(jwt(agentToken()))}}}};
    CHECK(mentions(credentialsStatic(pod, binary, ""), "configmap/p key b holds"));
}

TEST_CASE("limits live: every running container's cgroup, sidecars included", "[verify]") {
    // Issue 35 point 3: only containers[0] was read; a sidecar had no limit at all.
    json pod = verify_fixtures::hardenedPod("uid");
    // Each on a read-only root: the /bin/sh that reads its cgroup is the image's.
    const json readOnly = {{"readOnlyRootFilesystem", true}};
    pod["spec"]["containers"].push_back(
        {{"name", "sidecar"},
         {"securityContext", readOnly},
         {"resources", {{"limits", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}});
    pod["spec"]["initContainers"] =
        json::array({{{"name", "setup"}},
                     {{"name", "proxy"},
                      {"restartPolicy", "Always"},
                      {"securityContext", readOnly},
                      {"resources", {{"limits", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}}});
    pod["status"]["containerStatuses"].push_back(
        {{"name", "sidecar"}, {"state", {{"running", json::object()}}}});
    pod["status"]["initContainerStatuses"] =
        json::array({{{"name", "setup"}, {"state", {{"terminated", {{"exitCode", 0}}}}}},
                     {{"name", "proxy"}, {"state", {{"running", json::object()}}}}});
    std::map<std::string, std::string> cgroups = {
        {"agent",
         "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n"
         "rossoctl-cpu=/sys/fs/cgroup/cpu.max 50000 100000\n"},
        {"sidecar",
         "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=67108864\n"
         "rossoctl-cpu=/sys/fs/cgroup/cpu.max 10000 100000\n"},
        {"proxy",
         "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=67108864\n"
         "rossoctl-cpu=/sys/fs/cgroup/cpu.max 10000 100000\n"}};
    std::vector<std::string> asked;
    auto exec = [&](const std::vector<std::string>&, const std::string& container) {
        asked.push_back(container);
        ProbeOutput output;
        output.stdoutText = cgroups[container];
        return output;
    };
    auto all = limitsLiveEveryContainer(pod, exec);
    CHECK(all.verdict == Verdict::Pass);
    CHECK(asked == std::vector<std::string>{"proxy", "agent", "sidecar"});
    // Review 66 H3: a /bin/sh the pod may rewrite says which cgroup version holds it.
    json writable = pod;
    writable["spec"]["containers"][1]["securityContext"]["readOnlyRootFilesystem"] = false;
    const Finding rewritten = limitsLiveEveryContainer(writable, exec);
    CHECK(rewritten.verdict == Verdict::Unproven);
    CHECK(mentions(rewritten,
                   "container sidecar: its cgroup files were read by /bin/sh, and the "
                   "container's root filesystem is writable"));
    // Review 67 H4: or what it loads: a loader variable an exec inherits, a mount over /usr.
    json preloaded = pod;
    preloaded["spec"]["containers"][1]["env"] =
        json::array({{{"name", "LD_PRELOAD"}, {"value", "/workspace/.x.so"}}});
    CHECK(mentions(limitsLiveEveryContainer(preloaded, exec),
                   "container sidecar: its cgroup files were read by /bin/sh, and its env sets "
                   "LD_PRELOAD"));
    json mounted = pod;
    mounted["spec"]["containers"][1]["volumeMounts"] =
        json::array({{{"name", "usr"}, {"mountPath", "/usr"}}});
    CHECK(limitsLiveEveryContainer(mounted, exec).verdict == Verdict::Unproven);
    // Attack 67 H1: a file mounted over /bin/dash, what /bin/sh links to; read-only too, as its
    // volume may be written where it is mounted again.
    for (const bool readOnlyMount : {false, true}) {
        json dash = pod;
        dash["spec"]["containers"][1]["volumeMounts"] =
            json::array({{{"name", "tools"},
                          {"mountPath", "/bin/dash"},
                          {"subPath", "dash"},
                          {"readOnly", readOnlyMount}}});
        CHECK(mentions(limitsLiveEveryContainer(dash, exec),
                       "container sidecar: its cgroup files were read by /bin/sh, and a volume "
                       "is mounted at /bin/dash, over what the image's tools run and load"));
    }
    // Review 68 H2: spelled as the kubelet and runc clean it; H1: a termination message file,
    // which the kubelet mounts writable wherever the spec says; L4: a block device there.
    for (const char* spelling : {"bin/dash", "//bin/dash", "/./bin/dash", "/tmp/../bin/dash",
                                 "usr/lib", "/usr/./lib/x86_64-linux-gnu"}) {
        json odd = pod;
        odd["spec"]["containers"][1]["volumeMounts"] =
            json::array({{{"name", "tools"}, {"mountPath", spelling}, {"readOnly", true}}});
        INFO(spelling);
        CHECK(limitsLiveEveryContainer(odd, exec).verdict == Verdict::Unproven);
    }
    for (const char* sys : {"sys/fs/cgroup/memory", "/tmp/../sys/fs/cgroup/memory"}) {
        json odd = pod;
        odd["spec"]["containers"][1]["volumeMounts"] =
            json::array({{{"name", "cg"}, {"mountPath", sys}}});
        INFO(sys);
        CHECK(mentions(limitsLiveEveryContainer(odd, exec),
                       "a volume is mounted at /sys/fs/cgroup/memory"));
    }
    for (const char* message : {"/etc/ld.so.preload", "/sys/fs/cgroup/memory/x"}) {
        json odd = pod;
        odd["spec"]["containers"][1]["terminationMessagePath"] = message;
        INFO(message);
        CHECK(limitsLiveEveryContainer(odd, exec).verdict == Verdict::Unproven);
    }
    {
        json device = pod;
        device["spec"]["containers"][1]["volumeDevices"] =
            json::array({{{"name", "raw"}, {"devicePath", "/etc/ld.so.preload"}}});
        CHECK(limitsLiveEveryContainer(device, exec).verdict == Verdict::Unproven);
        // A CA bundle under /etc is no tool's code.
        json bundle = pod;
        bundle["spec"]["containers"][1]["volumeMounts"] =
            json::array({{{"name", "ca"}, {"mountPath", "/etc/ssl/certs"}, {"readOnly", true}}});
        CHECK(limitsLiveEveryContainer(bundle, exec).verdict == Verdict::Pass);
    }
    // Or a bash (as sh too) that sources, imports or traces at its start (review 68 H6).
    for (const char* name :
         {"BASH_ENV", "BASH_FUNC_read%%", "ENV", "SHELLOPTS", "BASH_XTRACEFD", "PS4"}) {
        json sourced = pod;
        sourced["spec"]["containers"][1]["env"] =
            json::array({{{"name", name}, {"value", "/workspace/.rc"}}});
        CHECK(limitsLiveEveryContainer(sourced, exec).verdict == Verdict::Unproven);
    }
    // A data volume elsewhere is no such place, under /usr's sources neither.
    for (const char* path : {"/data", "/usr/src/app"}) {
        json data = pod;
        data["spec"]["containers"][1]["volumeMounts"] =
            json::array({{{"name", "data"}, {"mountPath", path}}});
        CHECK(limitsLiveEveryContainer(data, exec).verdict == Verdict::Pass);
    }
    CHECK(mentions(all, "init container setup has finished"));
    CHECK(mentions(all, "container sidecar: /sys/fs/cgroup/memory.max = 67108864 (64Mi)"));
    cgroups["sidecar"] =
        "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=max\n"
        "rossoctl-cpu=/sys/fs/cgroup/cpu.max max 100000\n";
    auto unlimited = limitsLiveEveryContainer(pod, exec);
    CHECK(unlimited.verdict == Verdict::Fail);
    CHECK(mentions(unlimited, "container sidecar: /sys/fs/cgroup/cpu.max = max"));
    pod["status"]["containerStatuses"][1]["state"] = {
        {"waiting", {{"reason", "CrashLoopBackOff"}}}};
    cgroups["sidecar"] = cgroups["agent"];
    auto notRunning = limitsLiveEveryContainer(pod, exec);
    CHECK(notRunning.verdict == Verdict::Unproven);
    CHECK(mentions(notRunning, "container sidecar is not running"));
}

TEST_CASE("review 61 #10: a server's wrong types read as absent, never an exception",
          "[verify][hostile-server]") {
    // An exception here ended the whole sandbox's run in an error; absent, a container is one
    // whose limits are not shown, so unproven.
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["containers"].push_back("not a container");
    pod["spec"]["containers"].push_back({{"name", "odd"}, {"resources", "none"}});
    pod["spec"]["initContainers"] = json::array({7, {{"name", 3}}});
    pod["spec"]["ephemeralContainers"] = json::array({"x", {{"name", "dbg"}}});
    pod["status"]["containerStatuses"].push_back(
        {{"name", "odd"}, {"state", {{"running", json::object()}}}});
    pod["status"]["containerStatuses"].push_back("junk");
    pod["status"]["ephemeralContainerStatuses"] = json::array({{{"name", "dbg"}, {"state", 5}}});
    auto exec = [](const std::vector<std::string>&, const std::string&) {
        ProbeOutput output;
        output.stdoutText =
            "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n"
            "rossoctl-cpu=/sys/fs/cgroup/cpu.max 50000 100000\n";
        return output;
    };
    Finding live;
    REQUIRE_NOTHROW(live = limitsLiveEveryContainer(pod, exec));
    CHECK(live.verdict != Verdict::Pass);  // "odd" declares no limit
    CHECK(mentions(live, "ephemeral container dbg has not ended"));
    pod["status"] = "Running";  // no statuses: no container is known to run
    REQUIRE_NOTHROW(live = limitsLiveEveryContainer(pod, exec));
    CHECK(live.verdict == Verdict::Unproven);
}

TEST_CASE("review 66 H3: a volume over /sys makes the cgroup reading the pod's own",
          "[verify][false-pass]") {
    // An emptyDir at /sys/fs/cgroup/memory holding a bounded memory.kmem.tcp.limit_in_bytes
    // passed a node that bounds nothing.
    json pod = verify_fixtures::hardenedPod("uid");
    auto exec = [](const std::vector<std::string>&, const std::string&) {
        ProbeOutput output;
        output.stdoutText =
            "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\n"
            "rossoctl-value=536870912\nrossoctl-tcp=536870912\n"
            "rossoctl-cpu=/sys/fs/cgroup/cpu/cpu.cfs_quota_us 50000 100000\n";
        return output;
    };
    CHECK(limitsLiveEveryContainer(pod, exec).verdict == Verdict::Pass);
    // And review 68 L6: over /proc/meminfo, what an own kernel's reading takes.
    for (const char* path :
         {"/sys/fs/cgroup/memory", "//sys/./fs/cgroup/", "/sys", "/proc/meminfo"}) {
        INFO(path);
        pod["spec"]["containers"][0]["volumeMounts"] = {{{"name", "fake"}, {"mountPath", path}}};
        const Finding live = limitsLiveEveryContainer(pod, exec);
        CHECK(live.verdict == Verdict::Unproven);
        CHECK(mentions(live, "the files read there may be the pod's own"));
    }
}

TEST_CASE(
    "review 64 L1: a container without a name is never probed, so never the first one's "
    "limits",
    "[verify][hostile-server]") {
    // An exec without a container name runs in the pod's first container: its cgroup was taken
    // for the unnamed one's, which the server had sent with no limits of its own.
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["containers"].push_back(
        {{"name", 7}, {"resources", {{"limits", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}});
    pod["status"]["containerStatuses"].push_back(
        {{"name", ""}, {"state", {{"running", json::object()}}}});
    std::vector<std::string> asked;
    auto exec = [&](const std::vector<std::string>&, const std::string& container) {
        asked.push_back(container);
        ProbeOutput output;
        output.stdoutText =
            "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n"
            "rossoctl-cpu=/sys/fs/cgroup/cpu.max 50000 100000\n";
        return output;
    };
    const Finding live = limitsLiveEveryContainer(pod, exec);
    CHECK(live.verdict == Verdict::Unproven);
    CHECK(asked == std::vector<std::string>{"agent"});
    CHECK(mentions(live, "container  is not running"));
}

TEST_CASE("attack 60 L1, L2: an ephemeral container not verify's is unproven unless it ended",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("uid");
    const std::string bounded =
        "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n"
        "rossoctl-cpu=/sys/fs/cgroup/cpu.max 50000 100000\n";
    std::map<std::string, std::string> cgroups = {
        {"agent", bounded},
        {"hog",
         "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\n"
         "rossoctl-value=9223372036854771712\n"
         "rossoctl-cpu=/sys/fs/cgroup/cpu/cpu.cfs_quota_us -1 100000\n"}};
    std::vector<std::string> asked;
    auto exec = [&](const std::vector<std::string>&, const std::string& container) {
        asked.push_back(container);
        ProbeOutput output;
        output.stdoutText = cgroups[container];
        return output;
    };
    pod["spec"]["ephemeralContainers"] =
        json::array({{{"name", "hog"}, {"image", "python:3.12-slim"}}});
    pod["status"]["ephemeralContainerStatuses"] =
        json::array({{{"name", "hog"}, {"state", {{"running", json::object()}}}}});
    SECTION("running: its own reading proves nothing") {
        // Attack 60 L1: an emptyDir over /sys/fs/cgroup said 256Mi; its real cgroup had none.
        cgroups["hog"] = bounded;
        const Finding forged = limitsLiveEveryContainer(pod, exec);
        CHECK(forged.verdict == Verdict::Unproven);
        CHECK(asked == std::vector<std::string>{"hog", "agent"});
        CHECK_FALSE(mentions(forged, "a limit of its own cgroup"));
        CHECK(mentions(forged,
                       "ephemeral container hog runs: the API gives it no limits of its "
                       "own, and a reading from inside it (its image, its mounts) "
                       "proves none"));
    }
    SECTION("waiting: it starts later, unlimited") {
        // Attack 60 L2: ErrImageNeverPull was "not running: nothing to limit", then it ran.
        pod["status"]["ephemeralContainerStatuses"][0]["state"] = {
            {"waiting", {{"reason", "ErrImageNeverPull"}}}};
        const Finding waiting = limitsLiveEveryContainer(pod, exec);
        CHECK(waiting.verdict == Verdict::Unproven);
        CHECK(mentions(waiting, "ephemeral container hog has not ended"));
        pod["status"].erase("ephemeralContainerStatuses");
        CHECK(limitsLiveEveryContainer(pod, exec).verdict == Verdict::Unproven);
    }
    SECTION("ended: it never restarts") {
        pod["status"]["ephemeralContainerStatuses"][0]["state"] = {
            {"terminated", {{"exitCode", 0}}}};
        const Finding ended = limitsLiveEveryContainer(pod, exec);
        CHECK(ended.verdict == Verdict::Pass);
        CHECK(mentions(ended, "ephemeral container hog has ended (it never restarts)"));
    }
    SECTION("attack 61 L3: one shaped as verify's trusted probe is another's, and unproven") {
        // verify adds its own after it reads the pod: one there already is a lookalike (or a
        // run cut short), and an exec into it runs unbounded.
        TrustedProbeOptions options;
        options.image = "curlimages/curl:8";
        json probe = trustedProbeContainer("rossoctl-probe-a1b2c3", options);
        probe["imagePullPolicy"] = "IfNotPresent";
        probe["terminationMessagePath"] = "/dev/termination-log";
        REQUIRE(isTrustedProbeContainer(probe, "curlimages/curl:8"));
        pod["spec"]["ephemeralContainers"] = json::array({probe});
        pod["status"]["ephemeralContainerStatuses"] = json::array(
            {{{"name", "rossoctl-probe-a1b2c3"}, {"state", {{"running", json::object()}}}}});
        cgroups["rossoctl-probe-a1b2c3"] = cgroups["hog"];
        const Finding lookalike = limitsLiveEveryContainer(pod, exec);
        CHECK(lookalike.verdict == Verdict::Unproven);
        CHECK_FALSE(mentions(lookalike, "verify's own trusted probe"));
        CHECK(mentions(lookalike, "ephemeral container rossoctl-probe-a1b2c3"));
        // Ended, it is nothing to limit, as any other.
        pod["status"]["ephemeralContainerStatuses"][0]["state"] = {
            {"terminated", {{"exitCode", 0}}}};
        CHECK(limitsLiveEveryContainer(pod, exec).verdict == Verdict::Pass);
    }
}

TEST_CASE("the template's pod: its spec, the pod's labels and its own", "[verify]") {
    json box = verify_fixtures::sandbox();
    box["spec"]["podTemplate"]["metadata"]["labels"] = {{"tier", "agent"}};
    const json pod = verify_fixtures::hardenedPod("uid");
    const json next = podFromTemplate(box, pod);
    CHECK(next["metadata"]["labels"] ==
          json{{"agents.x-k8s.io/sandbox-name-hash", "abc"}, {"tier", "agent"}});
    CHECK(next["spec"] == box["spec"]["podTemplate"]["spec"]);
    CHECK(podFromTemplate(json::object(), pod).is_null());
    Finding first{Verdict::Pass, {"same", "pod only"}, ""};
    const Finding second{Verdict::Fail, {"same", "template only"}, ""};
    const Finding both = alongside(first, second, "t: ");
    CHECK(both.verdict == Verdict::Fail);
    CHECK(both.evidence == std::vector<std::string>{"same", "pod only", "t: template only"});
}

TEST_CASE("a container that can hold NET_RAW or NET_ADMIN leaves a denial unproven", "[verify]") {
    // Issue 35 point 7: a root neighbour with default capabilities spoofed ARP, so the trusted
    // probe's replies never came back while UDP left.
    json pod = verify_fixtures::hardenedPod("uid");
    CHECK(rawNetworkHolders(pod).empty());
    json neighbour = {{"name", "neighbour"}, {"securityContext", {{"runAsUser", 0}}}};
    pod["spec"]["containers"].push_back(neighbour);
    CHECK(rawNetworkHolders(pod) ==
          std::vector<std::string>{
              "container neighbour keeps the default NET_RAW (it may run as root)"});
    pod["spec"]["containers"][1]["securityContext"] = {
        {"runAsUser", 1000}, {"capabilities", {{"drop", {"ALL"}}, {"add", {"CAP_NET_ADMIN"}}}}};
    CHECK(rawNetworkHolders(pod) == std::vector<std::string>{"container neighbour adds NET_ADMIN"});
    pod["spec"]["containers"][1]["securityContext"] = {{"runAsUser", 1000}};  // may escalate
    CHECK(rawNetworkHolders(pod).size() == 1);
    pod["spec"]["containers"][1]["securityContext"] = {{"privileged", true}};
    CHECK(rawNetworkHolders(pod) == std::vector<std::string>{"container neighbour is privileged"});
    Finding denied{Verdict::Pass, {"curl could not connect"}, "curl"};
    auto spoofable = withoutSpoofableDenial(denied, rawNetworkHolders(pod));
    CHECK(spoofable.verdict == Verdict::Unproven);
    CHECK(mentions(spoofable, "can hold NET_RAW or NET_ADMIN (container neighbour is privileged)"));
    CHECK(withoutSpoofableDenial(denied, {}).verdict == Verdict::Pass);
    Finding connected{Verdict::Fail, {"connected"}, "curl"};
    CHECK(withoutSpoofableDenial(connected, rawNetworkHolders(pod)).verdict == Verdict::Fail);
}

TEST_CASE("a denial says whether the network answered or only the control beat the SYN",
          "[verify]") {
    const EgressTarget target = *parseEgressTarget("http://192.0.2.10:80/");
    ProbeOutput refused;
    refused.stdoutText =
        "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\nrossoctl-exit=7\n";
    refused.stderrText = "curl: (7) Failed to connect to 192.0.2.10 port 80: Connection refused\n";
    CHECK(mentions(egressLive(refused, target, reached("192.0.2.10")),
                   "an answer from the network (a reset or an ICMP refusal)"));
    ProbeOutput silent;
    silent.stdoutText =
        "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\nrossoctl-exit=28\n";
    silent.stderrText = "curl: (28) Connection timed out after 1300 milliseconds\n";
    CHECK(mentions(egressLive(silent, target, reached("192.0.2.10")),
                   "its SYN went unanswered, and the control's was answered far sooner"));
}

TEST_CASE("egress probe: never a tool from a path the pod can write", "[verify]") {
    // Issue 35 point 5: PATH=/workspace/.local/bin:... and a fake curl there printing the
    // failure markers gave egress pass while HTTP 200 came back.
    const EgressTarget target = closedTarget();
    TempDir pods;
    const std::string fake = pods.file("curl");
    std::ofstream(fake) << "#!/bin/sh\necho 'rossoctl-curl=http:000 connect:0.000000 ip:'\n"
                           "echo 'curl: (7) Failed to connect: Connection refused' >&2\nexit 7\n";
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    auto output = runLocally(egressProbeCommand(target), {"sh"}, {}, {"PATH=" + pods.file("")});
    INFO(output.stdoutText << output.stderrText);
    CHECK(output.stdoutText.find("rossoctl-tool=none\n") != std::string::npos);
    CHECK(egressLive(output, target, reached()).verdict == Verdict::Unproven);

    json container = verify_fixtures::hardenedPodSpec()["containers"][0];
    Finding denied{Verdict::Pass, {"curl could not connect"}, "curl"};
    ProbeOutput resolved;
    resolved.stdoutText = "rossoctl-tool=curl\nrossoctl-tool-path=/usr/bin/curl\n";
    auto imageTool = withoutWritableTool(denied, resolved, container);
    CHECK(imageTool.verdict == Verdict::Pass);
    CHECK(mentions(imageTool, "curl is /usr/bin/curl, on the image's read-only root filesystem"));
    resolved.stdoutText = "rossoctl-tool=curl\nrossoctl-tool-path=/workspace/.local/bin/curl\n";
    auto underVolume = withoutWritableTool(denied, resolved, container);
    CHECK(underVolume.verdict == Verdict::Unproven);
    CHECK(mentions(underVolume, "under the writable mount /workspace"));
    resolved.stdoutText = "rossoctl-tool=curl\nrossoctl-tool-path=/usr/bin/curl\n";
    container["securityContext"]["readOnlyRootFilesystem"] = false;
    CHECK(withoutWritableTool(denied, resolved, container).verdict == Verdict::Unproven);
    ProbeOutput noPath;
    noPath.stdoutText = "rossoctl-tool=curl\n";
    CHECK(withoutWritableTool(denied, noPath, container).verdict == Verdict::Unproven);
    CHECK(withoutWritableTool(denied, ProbeOutput{}, container).verdict == Verdict::Pass);
}

TEST_CASE("issue 30: on a kernel of the pod's own, each container's MemTotal is its limit",
          "[verify][gvisor]") {
    // gVisor in a pod limited to 512Mi: its cgroup files show no limit, its MemTotal does.
    json pod = verify_fixtures::hardenedPod("uid");
    REQUIRE(memoryLimitBytes(pod["spec"]["containers"][0]) == 536870912);
    std::string agent =
        "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\n"
        "rossoctl-value=9223372036854775807\n"
        "rossoctl-cpu=/sys/fs/cgroup/cpu/cpu.cfs_quota_us -1 100000\nrossoctl-memtotal=524288 kB\n";
    auto exec = [&](const std::vector<std::string>& command, const std::string&) {
        CHECK_THAT(command.at(2), Catch::Contains("/proc/meminfo"));
        ProbeOutput output;
        output.stdoutText = agent;
        return output;
    };
    // The cgroup files alone fail it: that is the node's reading, which this is not.
    CHECK(limitsLiveEveryContainer(pod, exec).verdict == Verdict::Fail);
    const Finding sized = limitsLiveEveryContainer(pod, exec, true);
    CHECK(sized.verdict == Verdict::Pass);
    CHECK(sized.probe == "meminfo");
    CHECK(mentions(sized,
                   "container agent: its kernel shows MemTotal 512Mi, no more than the "
                   "container's memory limit 512Mi"));
    CHECK(mentions(sized, "the cpu limit is not visible in that kernel"));
    SECTION("a kernel larger than the limit was not sized to it: unproven, not fail") {
        agent.replace(agent.find("524288 kB"), 9, "24684000 kB");
        const Finding big = limitsLiveEveryContainer(pod, exec, true);
        CHECK(big.verdict == Verdict::Unproven);
        CHECK(mentions(big, "more than the container's memory limit 512Mi"));
    }
    SECTION("no MemTotal, or one in another unit: unproven") {
        agent.replace(agent.find("524288 kB"), 9, "524288 MB");
        CHECK(limitsLiveEveryContainer(pod, exec, true).verdict == Verdict::Unproven);
        agent = "rossoctl-file=none\nrossoctl-cpu=none\n";
        CHECK(limitsLiveEveryContainer(pod, exec, true).verdict == Verdict::Unproven);
    }
    SECTION("a container with no memory limit: unproven") {
        pod["spec"]["containers"][0]["resources"]["limits"].erase("memory");
        CHECK(limitsLiveEveryContainer(pod, exec, true).verdict == Verdict::Unproven);
    }
}
