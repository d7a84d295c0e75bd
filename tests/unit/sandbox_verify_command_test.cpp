// sandbox verify end to end, offline: the API objects of a hardened sandbox, a pod that answers
// each probe from its command line, and the positive control through the injected resolver.
#include <catch2/catch.hpp>

#include "probe_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::Listener;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

json sandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "uid-orders"},
              {"resourceVersion", "5"}}},
            {"spec", {{"shutdownPolicy", "Delete"}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "Ready"}}}}}}};
}

json hardenedPod(const std::string& uid) {
    return json::parse(R"({
      "metadata": {"name": "orders", "namespace": "team1", "uid": ")" +
                       uid + R"(",
        "creationTimestamp": "2023-11-14T22:00:05Z",
        "labels": {"agents.x-k8s.io/sandbox-name-hash": "abc"},
        "ownerReferences": [{"kind": "Sandbox", "name": "orders", "uid": "uid-orders",
                             "controller": true}]},
      "spec": {
        "automountServiceAccountToken": false,
        "activeDeadlineSeconds": 86400,
        "containers": [{"name": "agent", "workingDir": "/workspace",
                        "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}},
                        "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]}],
        "volumes": [{"name": "workspace", "emptyDir": {}}]},
      "status": {"phase": "Running",
                 "conditions": [{"type": "Ready", "status": "True"}]}})");
}

json list(const std::vector<json>& items) {
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", items}};
}

json policies() {
    return json::parse(R"([
      {"metadata": {"name": "default-deny"},
       "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}},
      {"metadata": {"name": "allow-dns"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"],
       "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                           "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                   "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}}])");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Lines "rossoctl-KEY=PATH" for each path of a canary command, from argument `first` on.
std::string perPath(const std::vector<std::string>& command, const std::string& key, size_t first) {
    std::string out;
    for (size_t i = first; i < command.size(); ++i)
        out += "rossoctl-" + key + "=" + command[i] + "\n";
    return out + "rossoctl-done=1\n";
}

// The pod: no token, egress refused, a 512Mi cgroup, canaries written and gone after the
// restart; `egressTool` is what the egress probe finds in the image.
testing::RoutedServer::ExecResponder hardenedPodAnswers(const std::string& egressTool) {
    return [egressTool](const std::vector<std::string>& command) {
        const std::string script = command.size() > 2 ? command[2] : "";
        if (contains(script, "rossoctl-token"))
            return testing::execRan(
                "rossoctl-token-exit=1\n",
                "cat: /var/run/secrets/kubernetes.io/serviceaccount/token: No such file or "
                "directory\n",
                0);
        if (contains(script, "memory.max"))
            return testing::execRan(
                "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n", "", 0);
        if (contains(script, "rossoctl-tool"))
            return egressTool == "curl"
                       ? testing::execRan(
                             "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 "
                             "ip:\nrossoctl-exit=7\n",
                             "curl: (7) Failed to connect to 127.0.0.1: Connection refused\n", 0)
                       : testing::execRan("rossoctl-tool=none\n", "", 0);
        if (contains(script, "rossoctl-written"))
            return testing::execRan(perPath(command, "written", 5), "", 0);  // after the content
        if (contains(script, "rossoctl-present"))
            return testing::execRan(perPath(command, "absent", 4), "", 0);
        return testing::execRan("", "unexpected probe\n", 1);
    };
}

// A hardened sandbox whose pod is replaced (a new UID) when verify deletes it.
void serveHardened(TestHost& host, const std::string& egressTool) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    host.server.onJson("GET", kSandboxes, 200, list({sandbox()}));
    host.server.onJson("GET", kPods, 200, list({hardenedPod("pod-uid-1")}));
    host.server.onStream(
        "GET", kPods + "?watch=true",
        {json{{"type", "ADDED"}, {"object", hardenedPod("pod-uid-2")}}.dump() + "\n"});
    host.server.on("DELETE", kPods + "/orders", 200, "{}");
    host.server.onJson("GET", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies", 200,
                       list({policies()[0], policies()[1]}));
    host.server.onJson("GET", "/api/v1/namespaces/team1/resourcequotas", 200,
                       list({json::parse(R"({"metadata": {"name": "sandbox-quota"},
                              "spec": {"hard": {"limits.memory": "8Gi", "pods": "20"}}})")}));
    host.server.onJson("GET", "/api/v1/namespaces/team1/secrets", 200, list({}));
    host.server.onExec("team1", "orders", hardenedPodAnswers(egressTool));
}

json verdicts(const json& report) {
    json byCheck = json::object();
    for (const auto& check : report["checks"]) byCheck[check["id"].get<std::string>()] = check;
    return byCheck;
}

}  // namespace

TEST_CASE("sandbox verify: every help example parses and validates", "[verify][command]") {
    testing::checkHelpExamples({"sandbox", "verify"});
}

TEST_CASE("sandbox verify rejects bad input before sending anything", "[verify][command]") {
    testing::checkUsageErrors({
        {"sandbox", "verify"},
        {"sandbox", "verify", "Orders!"},
        {"sandbox", "verify", "orders", "--all"},
        {"sandbox", "verify", "orders", "--egress-target", "ftp://example.com"},
        {"sandbox", "verify", "orders", "-o", "yaml"},
        {"sandbox", "verify", "orders", "--trusted-probe", "busy box"},
        {"sandbox", "verify", "orders", "--timeout", "soon"},
    });
}

TEST_CASE("sandbox verify of a hardened sandbox passes every check, offline", "[verify][command]") {
    Listener control;
    TestHost host;
    serveHardened(host, "curl");
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode =
        host.run({"sandbox", "verify", "orders", "--egress-target", target, "-o", "json"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 0);
    const json report = testing::printedJson(host.out.str());
    CHECK(report["result"] == "pass");
    const json checks = verdicts(report);
    CHECK(checks.size() == 4);
    for (const auto& [id, check] : checks.items()) {
        INFO(id << ": " << check.dump());
        CHECK(check["result"] == "pass");
    }
    // The control looked the target up through the Context's resolver, not the system's.
    CHECK(host.resolver.asked == std::vector<std::string>{"control.test"});
    // The pod was deleted once, with its UID as precondition, to prove nothing survives.
    auto deletes = host.server.requestsTo("DELETE", kPods + "/orders");
    REQUIRE(deletes.size() == 1);
    CHECK(json::parse(deletes[0].body)["preconditions"]["uid"] == "pod-uid-1");
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kPods + "/orders"});
}

TEST_CASE("sandbox verify: an image with no egress tool leaves egress unproven (exit 3)",
          "[verify][command]") {
    Listener control;
    TestHost host;
    serveHardened(host, "none");
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode = host.run(
        {"sandbox", "verify", "orders", "--egress-target", target, "-o", "json", "--no-restart"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["egress"]["result"] == "unproven");
    CHECK(checks["egress"]["live"]["evidence"].dump().find("none of curl") != std::string::npos);
    CHECK(checks["nothing-survives"]["result"] == "unproven");  // --no-restart
    CHECK(checks["limits"]["result"] == "pass");
    CHECK(host.server.writes().empty());
}

TEST_CASE("sandbox verify: a missing sandbox, a refused read, a pod not running",
          "[verify][command]") {
    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "verify", "ghost"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox/ghost not found in namespace team1; run \"rossoctl sandbox list -n "
          "team1\"\n");

    TestHost forbidden;
    forbidden.serveSandboxGroup();
    forbidden.server.on("GET", kSandboxes + "/orders", 403,
                        statusBody(403, "Forbidden", "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "verify", "orders"}) == kExitError);
    CHECK(contains(forbidden.err.str(), "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.server.writes().empty());

    TestHost pending;
    pending.serveSandboxGroup();
    pending.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    json pod = hardenedPod("pod-uid-1");
    pod["status"]["phase"] = "Pending";
    pending.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(pending.run({"sandbox", "verify", "orders"}) == kExitError);
    CHECK(contains(pending.err.str(), "in phase Pending, not Running"));
    CHECK(pending.server.execs.empty());

    TestHost none;  // --all in an empty namespace
    none.serveSandboxGroup();
    none.server.onJson("GET", kSandboxes, 200, list({}));
    CHECK(none.run({"sandbox", "verify", "--all"}) == kExitError);
    CHECK(contains(none.err.str(), "nothing to verify"));
}

TEST_CASE("sandbox verify: a probe that floods its output is unproven, its prefix never parsed",
          "[verify][command][hostile]") {
    TestHost host;
    serveHardened(host, "none");
    // The token probe's right answer, then more than any probe's cap: what a pod that prints
    // the compliant text first and then 1.5 GiB would send.
    const auto honest = hardenedPodAnswers("none");
    host.server.onExec("team1", "orders", [honest](const std::vector<std::string>& command) {
        auto script = honest(command);
        if (command.size() > 2 && contains(command[2], "rossoctl-token"))
            script.stdoutText += std::string(200 * 1024, 'A');
        return script;
    });
    const int exitCode = host.run({"sandbox", "verify", "orders", "-o", "json", "--no-restart"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["service-account-token"]["live"]["result"] == "unproven");
    CHECK(checks["service-account-token"]["live"]["evidence"].dump().find(
              "printed more than 65536 bytes") != std::string::npos);
}
