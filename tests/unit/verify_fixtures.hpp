#pragma once
// An offline hardened sandbox for sandbox verify: the API objects (the Sandbox and its template,
// the pod, policies, quota), a pod that answers each probe from its command line, and the
// replacement pod the restart brings.
#include <catch2/catch.hpp>
#include <functional>

#include "probe_fixtures.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "test_host.hpp"

namespace rossoctl::testing::verify_fixtures {

using nlohmann::json;

inline const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
inline const std::string kPods = "/api/v1/namespaces/team1/pods";

inline json hardenedPodSpec() {
    return json::parse(R"({
        "automountServiceAccountToken": false,
        "activeDeadlineSeconds": 86400,
        "securityContext": {"runAsNonRoot": true, "runAsUser": 65532,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "agent", "workingDir": "/workspace",
                        "securityContext": {"runAsNonRoot": true, "runAsUser": 65532,
                          "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
                          "capabilities": {"drop": ["ALL"]}},
                        "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}},
                        "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]}],
        "volumes": [{"name": "workspace", "emptyDir": {}}]})");
}

// The pod spec as rossoctl writes it for a Sandbox: the egress gate first (attack 56 E7).
inline json gatedPodSpec() {
    json spec = hardenedPodSpec();
    spec["enableServiceLinks"] = false;  // as model::hardenedPodSpec: the gate's target is fixed
    model::addEgressGate(spec, model::kDefaultGateImage);
    return spec;
}

inline json sandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "uid-orders"},
              {"resourceVersion", "5"}}},
            {"spec",
             {{"shutdownPolicy", "Delete"},
              {"podTemplate", {{"metadata", json::object()}, {"spec", gatedPodSpec()}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "Ready"}}}}}}};
}

inline json hardenedPod(const std::string& uid) {
    json pod = json::parse(R"({
      "metadata": {"name": "orders", "namespace": "team1", "uid": ")" +
                           uid + R"(",
        "creationTimestamp": "2023-11-14T22:00:05Z",
        "labels": {"agents.x-k8s.io/sandbox-name-hash": "abc"},
        "ownerReferences": [{"kind": "Sandbox", "name": "orders", "uid": "uid-orders",
                             "controller": true}]},
      "status": {"phase": "Running",
                 "conditions": [{"type": "Ready", "status": "True"}],
                 "initContainerStatuses": [{"name": "rossoctl-egress-gate",
                   "image": "docker.io/library/busybox:1.36", "state": {"terminated":
                   {"exitCode": 0, "reason": "Completed",
                    "message": "rossoctl-egress-gate: policies held after 3 tries\n"}}}],
                 "containerStatuses": [{"name": "agent", "state": {"running": {}}}]}})");
    pod["spec"] = gatedPodSpec();
    pod["spec"]["nodeName"] = "node-1";
    return pod;
}

// The node the pod runs on: its capacity bounds what a limit can (attack 56 L2).
inline json node() {
    return json::parse(R"({"metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": "32", "memory": "24590812Ki", "pods": "110"}}})");
}

inline json list(const std::vector<json>& items) {
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", items}};
}

// A watch's BOOKMARK at the revision the lists stand at ("10"): the server's record of changes
// has been sent up to there.
inline std::string progress(const std::string& version = "10") {
    return json{{"type", "BOOKMARK"}, {"object", {{"metadata", {{"resourceVersion", version}}}}}}
               .dump() +
           "\n";
}

inline json policies() {
    return json::parse(R"([
      {"metadata": {"name": "default-deny"},
       "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}},
      {"metadata": {"name": "allow-dns"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"],
       "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                           "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                   "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}}])");
}

// The static egress finding of a bare pod of team1 under policies(), with inputs, and its
// evidence as one text.
inline verify::Finding bareEgress(const verify::EgressInputs& inputs) {
    const json pod = json::parse(R"({"metadata": {"name": "orders-x", "namespace": "team1"},
                                     "spec": {}})");
    return verify::egressStatic(pod, policies(), inputs);
}
inline std::string evidenceText(const verify::Finding& finding) {
    std::string text;
    for (const auto& line : finding.evidence) text += (text.empty() ? "" : "\n") + line;
    return text;
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Lines "rossoctl-KEY=PATH" for each path of a canary command, from argument `first` on.
inline std::string perPath(const std::vector<std::string>& command, const std::string& key,
                           size_t first) {
    std::string out;
    for (size_t i = first; i < command.size(); ++i)
        out += "rossoctl-" + key + "=" + command[i] + "\n";
    return out + "rossoctl-done=1\n";
}

// The pod: no token, egress refused, a 512Mi cgroup, canaries written and gone after the
// restart; `egressTool` is what the egress probe finds in the image.
inline testing::RoutedServer::ExecResponder hardenedPodAnswers(const std::string& egressTool) {
    return [egressTool](const std::vector<std::string>& command) {
        const std::string script = command.size() > 2 ? command[2] : "";
        if (contains(script, "rossoctl-token"))
            return testing::execRan(
                "rossoctl-token-exit=1\nrossoctl-token-error=sh: can't open "
                "'/var/run/secrets/kubernetes.io/serviceaccount/token': No such file or "
                "directory\n",
                "", 0);
        if (contains(script, "memory.max"))
            return testing::execRan(
                "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n"
                "rossoctl-cpu=/sys/fs/cgroup/cpu.max 50000 100000\n",
                "", 0);
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
        if (contains(script, "rossoctl-processes")) {
            std::string out;
            for (const char* who : {"self", "1"})
                for (const char* line : {"Name:\tsleep", "Uid:\t65532\t65532\t65532\t65532",
                                         "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000",
                                         "NoNewPrivs:\t1", "Seccomp:\t2"})
                    out += std::string("rossoctl-") + who + "-" + line + "\n";
            return testing::execRan(out +
                                        "rossoctl-processes=3\nrossoctl-kernel=6.1.0\n"
                                        "rossoctl-done=1\n",
                                    "", 0);
        }
        return testing::execRan("", "unexpected probe\n", 1);
    };
}

// A hardened sandbox whose pod is replaced (a new UID) when verify deletes it.
// pod, next: the pod verify finds and the one that replaces it after the restart; answers:
// the pod's replies to probes (default: hardenedPodAnswers); others: more pods of the namespace.
inline void serveHardened(TestHost& host, const std::string& egressTool,
                          const json& box = sandbox(), const json& pod = hardenedPod("pod-uid-1"),
                          const json& next = hardenedPod("pod-uid-2"),
                          testing::RoutedServer::ExecResponder answers = nullptr,
                          const std::vector<json>& others = {}) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, box);
    host.server.onJson("GET", kSandboxes, 200, list({box}));
    std::vector<json> pods{pod};
    pods.insert(pods.end(), others.begin(), others.end());
    host.server.onJson("GET", kPods, 200, list(pods));
    // The Sandbox's selector lists (and watches) its own pod alone.
    const std::string selected = "?labelSelector=agents.x-k8s.io%2Fsandbox-name-hash%3Dabc";
    if (!others.empty()) {
        host.server.onJson("GET", kPods + selected, 200, list({pod}));
        host.server.onStream("GET", kPods + selected + "&watch=true",
                             {json{{"type", "ADDED"}, {"object", next}}.dump() + "\n"});
    }
    host.server.onJson("GET", kPods + "/orders", 200, next);  // read after the restart
    host.server.onStream("GET", kPods + "?watch=true",
                         {json{{"type", "ADDED"}, {"object", next}}.dump() + "\n"});
    host.server.on("DELETE", kPods + "/orders", 200, "{}");
    host.server.onJson("GET", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies", 200,
                       list({policies()[0], policies()[1]}));
    // Nothing written while verify ran: the server's record of changes since its reads is
    // empty (review 64 H3).
    host.server.onStream("GET",
                         "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies?watch=true",
                         {progress()});
    for (const char* kind : {"secrets", "configmaps"})
        host.server.onStream("GET", std::string("/api/v1/namespaces/team1/") + kind + "?watch=true",
                             {progress()});
    // Nor any pod or Service of the cluster (attack 66 N1, T3).
    for (const char* kind : {"pods", "services"})
        host.server.onStream("GET", std::string("/api/v1/") + kind + "?watch=true", {progress()});
    host.server.onJson("GET", "/api/v1/namespaces/team1/resourcequotas", 200,
                       list({json::parse(R"({"metadata": {"name": "sandbox-quota"},
                              "spec": {"hard": {"limits.cpu": "4", "limits.memory": "8Gi", "pods": "20"}}})")}));
    host.server.onJson("GET", "/api/v1/namespaces/team1/secrets", 200, list({}));
    host.server.onJson("GET", "/api/v1/nodes/node-1", 200, node());
    // The node's kubelet gives a container with no seccomp profile the runtime's default.
    host.server.onJson("GET", "/api/v1/nodes/node-1/proxy/configz", 200,
                       {{"kubeletconfig", {{"seccompDefault", true}}}});
    // The cluster's pods: its own and the namespace's, none with a way in from the node.
    host.server.onJson("GET", "/api/v1/pods", 200, list(pods));
    // No hand-made PersistentVolume of the node's files (review 61 #6).
    host.server.onJson("GET", "/api/v1/persistentvolumes", 200, list({}));
    // Every namespace refuses pods whose probes name a host (attack 59 K1).
    host.server.onJson("GET", "/version", 200, {{"gitVersion", "v1.36.0"}});
    host.server.onJson(
        "GET", "/api/v1/namespaces", 200,
        list({{{"metadata",
                {{"name", "team1"},
                 {"labels", {{"pod-security.kubernetes.io/enforce", "restricted"}}}}}}}));
    host.server.onExec("team1", "orders", answers ? answers : hardenedPodAnswers(egressTool));
}

// The lists of `path` sent, not the end's replay of what was written since (its watch, and the
// one-item list that brings the server's cache up to the end's revision first).
inline size_t listsOf(const TestHost& host, const std::string& path) {
    const auto sent = host.server.requestsTo("GET", path);
    return static_cast<size_t>(std::count_if(sent.begin(), sent.end(), [](const auto& request) {
        return request.url.find("watch=true") == std::string::npos &&
               request.url.find("resourceVersionMatch=") == std::string::npos;
    }));
}

// `bytes` in RFC 4648 base32 as Python writes it: b32encode (upper case, '=' padding), or
// b32encode(...).lower() without padding (a DNS label's form).
inline std::string base32(const std::string& bytes, bool lowerUnpadded = false) {
    const char* alphabet =
        lowerUnpadded ? "abcdefghijklmnopqrstuvwxyz234567" : "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (unsigned char c : bytes) {
        buffer = (buffer << 8) | c;
        for (bits += 8; bits >= 5; bits -= 5) out += alphabet[(buffer >> (bits - 5)) & 31];
    }
    if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
    while (!lowerUnpadded && out.size() % 8 != 0) out += '=';
    return out;
}

// `bytes` as one big-endian number in base 10, as Python's int.from_bytes(bytes, 'big') prints.
inline std::string asDecimal(const std::string& bytes) {
    std::vector<unsigned> number(bytes.begin(), bytes.end());
    for (auto& byte : number) byte &= 0xff;
    std::string digits;
    while (std::any_of(number.begin(), number.end(), [](unsigned b) { return b != 0; })) {
        unsigned remainder = 0;
        for (auto& byte : number) {
            const unsigned value = remainder * 256 + byte;
            byte = value / 10;
            remainder = value % 10;
        }
        digits += static_cast<char>('0' + remainder);
    }
    return {digits.rbegin(), digits.rend()};
}

inline json verdicts(const json& report) {
    json byCheck = json::object();
    for (const auto& check : report["checks"]) byCheck[check["id"].get<std::string>()] = check;
    return byCheck;
}

// `sandbox verify orders -o json` with a positive control listening here, and extra flags; the
// exit code.
inline int runVerifyJson(TestHost& host, const std::vector<std::string>& extra = {}) {
    testing::Listener control;
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    std::vector<std::string> args{"sandbox",
                                  "verify",
                                  "orders",
                                  "--egress-target",
                                  "http://control.test:" + std::to_string(control.port) + "/",
                                  "-o",
                                  "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return host.run(args);
}

// verify --no-restart of `box` with `pod` as its pod, where the last GET of `path` (verify's
// read at its end) answers `atEnd` and every one before it `before`; `more` adds routes (a
// watch's record) first. Its verdicts.
inline json verdictsChangedAtEnd(const std::string& path, const json& before, const json& atEnd,
                                 const json& pod, const json& box,
                                 const std::function<void(TestHost&)>& more = {}) {
    TestHost counting;  // how many reads a run makes, the end's included
    counting.server.onJson("GET", path, 200, before);
    serveHardened(counting, "curl", box, pod, pod);
    runVerifyJson(counting, {"--no-restart"});
    const std::size_t reads = counting.server.requestsTo("GET", path).size();
    REQUIRE(reads >= 1);
    TestHost host;
    for (std::size_t i = 0; i + 1 < reads; ++i) host.server.onJson("GET", path, 200, before);
    host.server.onJson("GET", path, 200, atEnd);
    if (more) more(host);
    serveHardened(host, "curl", box, pod, pod);
    runVerifyJson(host, {"--no-restart"});
    INFO(host.err.str());
    return verdicts(testing::printedJson(host.out.str()));
}

// A JWT (header.claims.signature) as the API server issues them; the signature is not checked.
inline std::string jwt(const json& claims) {
    auto part = [](const std::string& text) {
        std::string encoded = kube::base64Encode(text);
        while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
        for (char& c : encoded) c = c == '+' ? '-' : c == '/' ? '_' : c;
        return encoded;
    };
    return part(R"({"alg":"RS256","kid":"k"})") + "." + part(claims.dump()) + ".c2lnbmF0dXJl";
}

}  // namespace rossoctl::testing::verify_fixtures
