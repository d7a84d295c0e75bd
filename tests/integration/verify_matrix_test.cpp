// The adversarial matrix of sandbox verify (issue 14): sandboxes each open in one distinct way,
// created together in one project and verified in parallel. Each must exit 3 with evidence
// naming its cause; the hardened one passes; nothing passes through a dead target, a time-out
// or a missing tool.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "fault_support.hpp"
#include "harness.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verify_report.hpp"

using harness::evidenceOf;
using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

const rossoctl::kube::ResourceRef& sandboxes() {
    static const auto ref = resources::sandboxes("v1beta1");
    return ref;
}

json& podSpec(json& sandbox) {
    return sandbox["spec"]["podTemplate"]["spec"];
}
json& agent(json& sandbox) {
    return podSpec(sandbox)["containers"][0];
}

// A NetworkPolicy that selects only the sandbox `name` (by the label rossoctl gives it).
json policyFor(const std::string& policy, const std::string& name, const json& egress) {
    return {{"apiVersion", "networking.k8s.io/v1"},
            {"kind", "NetworkPolicy"},
            {"metadata", {{"name", policy}}},
            {"spec",
             {{"podSelector", {{"matchLabels", {{"app.kubernetes.io/name", name}}}}},
              {"policyTypes", json::array({"Egress"})},
              {"egress", egress}}}};
}

json toCidrs(const std::vector<std::string>& cidrs, const json& ports = nullptr) {
    json to = json::array();
    for (const auto& cidr : cidrs) to.push_back({{"ipBlock", {{"cidr", cidr}}}});
    json rule = {{"to", to}};
    if (!ports.is_null()) rule["ports"] = ports;
    return json::array({rule});
}

// On busybox:1.36, PATH holds only the named applets, plus any extra shell lines run before
// the agent sleeps.
void onlyTools(json& sandbox, const std::string& tools, const std::string& extra = "") {
    agent(sandbox)["image"] = "busybox:1.36";
    agent(sandbox)["command"] = {"/bin/sh", "-c",
                                 "/bin/mkdir -p /tmp/bin && for t in " + tools +
                                     "; do /bin/ln -s /bin/busybox /tmp/bin/$t; done; " + extra +
                                     " exec /bin/sleep infinity"};
    agent(sandbox)["env"] = json::array({{{"name", "PATH"}, {"value", "/tmp/bin"}}});
}

struct Case {
    std::string name;
    std::string check;     // the check that must not pass
    std::string verdict;   // fail or unproven
    std::string evidence;  // what its evidence must name
    std::vector<std::string> extraArgs;
};

}  // namespace

TEST_CASE("sandbox verify: the adversarial matrix", "[verify-matrix]") {
    const auto suiteStarted = std::chrono::steady_clock::now();
    harness::TestNamespace project("vmatrix", false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl(
            {"project", "create", ns, "--cpu", "8", "--memory", "8Gi", "--pods", "40"});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    // The control in a project of its own: the matrix's policies open egress to pods labelled
    // as its cases, and a pod that may be labelled so is not proven closed (attack 63 P1, E1).
    harness::TestNamespace hardProject("vmatrix-hard", false);
    const std::string hardNs = hardProject.name();
    harness::createProject(hardNs);
    const auto spaceOf = [&](const std::string& name) { return name == "hardened" ? hardNs : ns; };
    const std::string outside = harness::outsideUrl();
    const int port = [&] {
        const auto colon = outside.find(':', outside.find("//") + 2);
        return colon == std::string::npos ? (outside.rfind("https", 0) == 0 ? 443 : 80)
                                          : std::stoi(outside.substr(colon + 1));
    }();
    auto& admin = harness::admin();
    auto addPolicy = [&](const json& policy) {
        admin.create(resources::networkPolicies(), ns, policy);
    };

    std::vector<json> objects;
    std::vector<Case> cases;
    auto add = [&](json sandbox, Case expected) {
        objects.push_back(std::move(sandbox));
        cases.push_back(std::move(expected));
    };

    // From the pod's own PID space a denial is forgeable (issue 35 point 6): the hardened
    // sandbox passes with the probe outside the agent's reach.
    add(harness::smallSandbox(hardNs, "hardened"),
        {"hardened",
         "",
         "pass",
         "",
         {"--egress-target", outside, "--trusted-probe", "curlimages/curl:8"}});
    add(harness::smallSandbox(ns, "pod-probe"),
        {"pod-probe", "egress", "unproven", "from the pod, forgeable", {}});
    {
        // Issue 35 points 2 and 3: "0" is no limit, in the agent or in a sidecar.
        const json zero = {{"cpu", "0"}, {"memory", "64Mi"}};
        json zeroCpu = harness::smallSandbox(ns, "zero-cpu");
        agent(zeroCpu)["resources"] = {{"limits", zero}, {"requests", zero}};
        add(zeroCpu,
            {"zero-cpu", "limits", "fail", "container agent has cpu limit 0 is no limit", {}});
        json zeroSidecar = harness::smallSandbox(ns, "zero-sidecar");
        json sidecar = agent(zeroSidecar);
        sidecar["name"] = "sidecar";
        sidecar["resources"] = {{"limits", {{"cpu", "0"}, {"memory", "0"}}},
                                {"requests", {{"cpu", "0"}, {"memory", "0"}}}};
        podSpec(zeroSidecar)["containers"].push_back(sidecar);
        add(zeroSidecar, {"zero-sidecar",
                          "limits",
                          "fail",
                          "container sidecar has memory limit 0 is no limit",
                          {}});
        // Attack 67 C2: a memory-backed emptyDir keeps what an ended or restarted container
        // wrote, and the local node's kubelet makes no pod cgroup to bound it.
        json memory = harness::smallSandbox(ns, "memory-volume");
        podSpec(memory)["volumes"].push_back(
            {{"name", "m0"}, {"emptyDir", {{"medium", "Memory"}}}});
        agent(memory)["volumeMounts"].push_back({{"name", "m0"}, {"mountPath", "/m0"}});
        add(memory, {"memory-volume",
                     "limits",
                     "unproven",
                     "memory-backed emptyDir m0 keeps what a container wrote after it ends",
                     {}});
        // Attack 67 C3: the agent exits once at its start, and the kubelet starts it again; what
        // a container leaves in the pod's shared memory then is charged to no limit on a node
        // with no pod cgroups, as the local node is.
        json restarted = harness::smallSandbox(ns, "restarted");
        agent(restarted)["command"] = {
            "/bin/sh", "-c",
            "if [ ! -f /tmp/started ]; then : >/tmp/started; exit 1; fi; exec sleep infinity"};
        add(restarted, {"restarted",
                        "limits",
                        "unproven",
                        "container agent has restarted once, and the node's kubelet makes no "
                        "pod cgroups",
                        {}});
        // Attack 67 H1: a volume over the image's tools (a file over /bin/dash, there) makes
        // the cgroup reading by its /bin/sh the pod's word.
        json tools = harness::smallSandbox(ns, "tools-mount");
        podSpec(tools)["volumes"].push_back({{"name", "tools"}, {"emptyDir", json::object()}});
        agent(tools)["volumeMounts"].push_back(
            {{"name", "tools"}, {"mountPath", "/usr/libexec/tools"}, {"readOnly", true}});
        add(tools, {"tools-mount",
                    "limits",
                    "unproven",
                    "a volume is mounted at /usr/libexec/tools, over what the image's tools run "
                    "and load",
                    {}});
        // Point 4: the template is patched once the pod runs (below); the pod is judged, then
        // the template, then the pod verify's own restart makes from it.
        add(harness::smallSandbox(ns, "template-token"),
            {"template-token",
             "service-account-token",
             "fail",
             "the Sandbox's spec.podTemplate: pod (next pod of sandbox template-token) sets "
             "automountServiceAccountToken: true",
             {}});
        // Review 35 H1: the template patched to the node's network and capabilities once the
        // pod runs; host isolation and egress judge the template too.
        add(harness::smallSandbox(ns, "template-host"),
            {"template-host",
             "host-isolation",
             "fail",
             "the Sandbox's spec.podTemplate: pod: spec.hostNetwork: true",
             {"--egress-target", outside, "--no-restart"}});
    }
    add(harness::smallSandbox(ns, "all-but-port"),
        {"all-but-port", "egress", "fail", "networkpolicy/all-but-port rule 1 allows", {}});
    addPolicy(policyFor(
        "all-but-port", "all-but-port",
        toCidrs({"0.0.0.0/0"},
                json::array({{{"protocol", "TCP"}, {"port", 1}, {"endPort", port - 1}},
                             {{"protocol", "TCP"}, {"port", port + 1}, {"endPort", 65535}}}))));
    add(harness::smallSandbox(ns, "split-cidr"),
        {"split-cidr", "egress", "fail", "networkpolicy/split-cidr rule 1 allows 0.0.0.0/1", {}});
    addPolicy(policyFor("split-cidr", "split-cidr", toCidrs({"0.0.0.0/1", "128.0.0.0/1"})));
    add(harness::smallSandbox(ns, "additive"),
        {"additive", "egress", "fail", "networkpolicy/additive-b rule 1 allows 8.8.8.8/32", {}});
    addPolicy(policyFor("additive-a", "additive", json::array()));
    addPolicy(
        policyFor("additive-b", "additive",
                  toCidrs({"8.8.8.8/32"}, json::array({{{"protocol", "UDP"}, {"port", 53}}}))));
    add(harness::smallSandbox(ns, "managed"),
        {"managed",
         "egress",
         "fail",
         "networkpolicy/managed-style rule 1 allows 0.0.0.0/0 except",
         {}});
    addPolicy(policyFor(
        "managed-style", "managed",
        json::array(
            {{{"to",
               json::array(
                   {{{"ipBlock",
                      {{"cidr", "0.0.0.0/0"},
                       {"except",
                        {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}}}},
                    {{"ipBlock",
                      {{"cidr", "::/0"}, {"except", {"fc00::/7", "fe80::/10"}}}}}})}}})));
    add(harness::smallSandbox(ns, "udp-only"), {"udp-only", "egress", "fail", "UDP 1-65535", {}});
    addPolicy(policyFor("udp-only", "udp-only",
                        toCidrs({"0.0.0.0/0"}, json::array({{{"protocol", "UDP"}}}))));
    add(harness::smallSandbox(ns, "metadata"),
        {"metadata", "egress", "fail", "opens the cloud metadata address 169.254.169.254", {}});
    addPolicy(policyFor(
        "metadata", "metadata",
        toCidrs({"169.254.169.254/32"}, json::array({{{"protocol", "TCP"}, {"port", 80}}}))));
    add(harness::smallSandbox(ns, "lateral"),
        {"lateral", "egress", "fail", "pods {} in namespaces", {}});
    addPolicy(policyFor("lateral", "lateral",
                        json::array({{{"to", json::array({{{"podSelector", json::object()}}})}}})));
    add(harness::smallSandbox(ns, "dead-target"),
        {"dead-target",
         "egress",
         "unproven",
         "a dead target proves nothing",
         {"--egress-target", "http://unreachable.invalid/"}});
    {
        // A legacy token Secret, mounted as a volume in one sandbox and in env in another.
        // The token controller deletes a token Secret whose ServiceAccount does not exist.
        admin.create(resources::serviceAccounts(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "ServiceAccount"},
                      {"metadata", {{"name", "legacy"}}},
                      {"automountServiceAccountToken", false}});
        admin.create(resources::secrets(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata",
                       {{"name", "legacy-token"},
                        {"annotations", {{"kubernetes.io/service-account.name", "legacy"}}}}},
                      {"type", "kubernetes.io/service-account-token"}});
        json volume = harness::smallSandbox(ns, "token-volume");
        podSpec(volume)["volumes"].push_back(
            {{"name", "legacy"}, {"secret", {{"secretName", "legacy-token"}, {"optional", true}}}});
        agent(volume)["volumeMounts"].push_back(
            {{"name", "legacy"}, {"mountPath", "/var/run/legacy"}, {"readOnly", true}});
        add(volume, {"token-volume",
                     "service-account-token",
                     "fail",
                     "volume legacy exposes secret/legacy-token",
                     {}});
        json env = harness::smallSandbox(ns, "token-env");
        agent(env)["env"] =
            json::array({{{"name", "TOKEN"},
                          {"valueFrom",
                           {{"secretKeyRef",
                             {{"name", "legacy-token"}, {"key", "token"}, {"optional", true}}}}}}});
        add(env, {"token-env",
                  "service-account-token",
                  "fail",
                  "env TOKEN (secretKeyRef) exposes secret/legacy-token",
                  {}});
    }
    {
        // Point 1: a working token of a service account bound to edit, copied into an ordinary
        // Secret and ConfigMap, mounted and in env.
        admin.create(resources::serviceAccounts(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "ServiceAccount"},
                      {"metadata", {{"name", "agent-bot"}}}});
        admin.create(
            {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true}, ns,
            {{"apiVersion", "rbac.authorization.k8s.io/v1"},
             {"kind", "RoleBinding"},
             {"metadata", {{"name", "agent-bot-edit"}}},
             {"roleRef",
              {{"apiGroup", "rbac.authorization.k8s.io"},
               {"kind", "ClusterRole"},
               {"name", "edit"}}},
             {"subjects",
              json::array(
                  {{{"kind", "ServiceAccount"}, {"name", "agent-bot"}, {"namespace", ns}}})}});
        const std::string token = harness::issueToken(ns, "agent-bot");
        admin.create(resources::secrets(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", {{"name", "notes"}}},
                      {"type", "Opaque"},
                      {"stringData", {{"bot", token}}}});
        admin.create(resources::configMaps(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", "settings"}}},
                      {"data", {{"bot", token}}}});
        json copied = harness::smallSandbox(ns, "copied-token");
        podSpec(copied)["volumes"].push_back(
            {{"name", "notes"}, {"secret", {{"secretName", "notes"}}}});
        agent(copied)["volumeMounts"].push_back(
            {{"name", "notes"}, {"mountPath", "/var/run/notes"}, {"readOnly", true}});
        agent(copied)["env"] = json::array(
            {{{"name", "BOT"},
              {"valueFrom", {{"configMapKeyRef", {{"name", "settings"}, {"key", "bot"}}}}}}});
        add(copied,
            {"copied-token", "service-account-token", "fail", "secret/notes key bot holds a", {}});
        // Review 35 H2: the same token in an annotation the downward API shows, in a hook's
        // command line, and inside a base64-encoded kubeconfig.
        json annotated = harness::smallSandbox(ns, "annotation-token");
        annotated["spec"]["podTemplate"]["metadata"]["annotations"] = {{"ci/token", token}};
        podSpec(annotated)["volumes"].push_back(
            {{"name", "podinfo"},
             {"downwardAPI",
              {{"items",
                json::array({{{"path", "annotations"},
                              {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}})}}}});
        agent(annotated)["volumeMounts"].push_back(
            {{"name", "podinfo"}, {"mountPath", "/etc/podinfo"}, {"readOnly", true}});
        add(annotated, {"annotation-token",
                        "service-account-token",
                        "fail",
                        "annotation ci/token (through volume podinfo) holds a",
                        {}});
        json hooked = harness::smallSandbox(ns, "hook-token");
        agent(hooked)["lifecycle"] = {
            {"postStart", {{"exec", {{"command", json::array({"sh", "-c", "true", token})}}}}}};
        add(hooked, {"hook-token",
                     "service-account-token",
                     "fail",
                     "container agent postStart hook holds a",
                     {}});
        json encoded = harness::smallSandbox(ns, "b64-kubeconfig");
        const std::string kubeconfig =
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "
            "\"https://kubernetes.default.svc\"}\nusers:\n- name: bot\n  user:\n    token: " +
            token + "\n";
        agent(encoded)["env"] = json::array(
            {{{"name", "KUBECONFIG_B64"}, {"value", rossoctl::kube::base64Encode(kubeconfig)}}});
        add(encoded, {"b64-kubeconfig", "service-account-token", "fail", "base64-encoded", {}});
        // Review 35: the token in two halves the kubelet joins by $(VAR) expansion (whole in
        // the process's environment), and hex-encoded.
        json split = harness::smallSandbox(ns, "split-token");
        const size_t half = token.size() / 2;
        agent(split)["env"] = json::array({{{"name", "HEAD"}, {"value", token.substr(0, half)}},
                                           {{"name", "TAIL"}, {"value", token.substr(half)}},
                                           {{"name", "BOT"}, {"value", "$(HEAD)$(TAIL)"}}});
        add(split, {"split-token",
                    "service-account-token",
                    "fail",
                    "container agent env BOT (as expanded) holds a",
                    {}});
        json hexed = harness::smallSandbox(ns, "hex-token");
        std::string hex;
        for (unsigned char c : token) hex += fmt::format("{:02x}", c);
        agent(hexed)["env"] = json::array({{{"name", "BOT_HEX"}, {"value", hex}}});
        add(hexed, {"hex-token", "service-account-token", "fail", "hex-encoded", {}});
        // Attack 53 F3: the token split at its first dot over two env values, no expansion.
        json dotSplit = harness::smallSandbox(ns, "dot-split-token");
        const size_t dot = token.find('.');
        agent(dotSplit)["env"] = json::array({{{"name", "T1"}, {"value", token.substr(0, dot)}},
                                              {{"name", "T2"}, {"value", token.substr(dot + 1)}}});
        add(dotSplit, {"dot-split-token",
                       "service-account-token",
                       "fail",
                       "container agent env T2 holds the claims of",
                       {}});
        // Attack 53 F4: a kubeconfig kubectl reads as is, with its keys and the token's dots
        // \u-escaped (kcfg.py), in a mounted ConfigMap.
        std::string escapedToken;
        for (const char c : token)
            escapedToken += c == '.' ? std::string("\\u002e") : std::string(1, c);
        admin.create(
            resources::configMaps(), ns,
            {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "escaped-kubeconfig"}}},
             {"data",
              {{"config",
                R"({"apiVersion": "v1", "kind": "Config", "\u0063lusters": [{"name": "k", )"
                R"("cluster": {"server": "https://kubernetes.default.svc"}}], "\u0075sers": )"
                R"([{"name": "u", "user": {"token": ")" +
                    escapedToken + R"("}}]})"}}}});
        json escaped = harness::smallSandbox(ns, "escaped-kubeconfig");
        podSpec(escaped)["volumes"].push_back(
            {{"name", "cfg"}, {"configMap", {{"name", "escaped-kubeconfig"}}}});
        agent(escaped)["volumeMounts"].push_back(
            {{"name", "cfg"}, {"mountPath", "/cfg"}, {"readOnly", true}});
        add(escaped, {"escaped-kubeconfig",
                      "service-account-token",
                      "fail",
                      "configmap/escaped-kubeconfig key config holds",
                      {}});
    }
    {
        // Review 35 H2: a kubernetes.io/tls Secret whose certificate the cluster's CA signed
        // for a client (system:masters): with its key, it is the cluster's admin.
        const std::string pki = harness::clusterDir() + "/pki";
        char scratch[] = "/tmp/rossoctl-client-cert-XXXXXX";
        REQUIRE(mkdtemp(scratch) != nullptr);
        const std::string dir = scratch;
        const auto made = harness::run(
            {"sh", "-c",
             "set -e; cd \"$1\"; openssl ecparam -name prime256v1 -genkey -noout -out k.pem; "
             "openssl req -new -key k.pem -subj /O=system:masters/CN=leaked-admin -out r.csr; "
             "printf 'extendedKeyUsage=clientAuth\\n' > ext; "
             "openssl x509 -req -in r.csr -CA \"$2/ca.crt\" -CAkey \"$2/ca.key\" "
             "-CAcreateserial -CAserial serial -days 1 -extfile ext -out c.pem 2>/dev/null; "
             "openssl pkey -in k.pem -outform DER -out k.der; "
             "openssl x509 -in c.pem -outform DER -out c.der",
             "sh", dir, pki});
        INFO(made.out << made.err);
        REQUIRE(made.exitCode == 0);
        auto slurp = [](const std::string& path) {
            std::ifstream in(path);
            return std::string(std::istreambuf_iterator<char>(in), {});
        };
        admin.create(resources::secrets(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", {{"name", "client-tls"}}},
                      {"type", "kubernetes.io/tls"},
                      {"stringData",
                       {{"tls.crt", slurp(dir + "/c.pem")}, {"tls.key", slurp(dir + "/k.pem")}}}});
        // Review 35: the same pair written binary (DER), as Java and Go programs often keep it.
        admin.create(resources::secrets(), ns,
                     {{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", {{"name", "client-der"}}},
                      {"data",
                       {{"tls.crt", rossoctl::kube::base64Encode(slurp(dir + "/c.der"))},
                        {"tls.key", rossoctl::kube::base64Encode(slurp(dir + "/k.der"))}}}});
        std::filesystem::remove_all(dir);
        json der = harness::smallSandbox(ns, "client-der");
        podSpec(der)["volumes"].push_back(
            {{"name", "tls"}, {"secret", {{"secretName", "client-der"}}}});
        agent(der)["volumeMounts"].push_back(
            {{"name", "tls"}, {"mountPath", "/etc/tls"}, {"readOnly", true}});
        add(der, {"client-der",
                  "service-account-token",
                  "fail",
                  "secret/client-der key tls.key holds a private key whose client certificate",
                  {}});
        json tls = harness::smallSandbox(ns, "client-cert");
        podSpec(tls)["volumes"].push_back(
            {{"name", "tls"}, {"secret", {{"secretName", "client-tls"}}}});
        agent(tls)["volumeMounts"].push_back(
            {{"name", "tls"}, {"mountPath", "/etc/tls"}, {"readOnly", true}});
        add(tls, {"client-cert",
                  "service-account-token",
                  "fail",
                  "secret/client-tls key tls.key holds a private key whose client certificate",
                  {}});
    }
    {
        rossoctl::model::SandboxOptions options;
        options.name = "claim-delete";
        options.namespaceName = ns;
        options.pod.image = "busybox";
        options.pod.cpu = "100m";
        options.pod.memory = "64Mi";
        options.storage = "16Mi";
        options.gateImage = harness::projectGateImage(ns);
        options.shutdownTime = std::chrono::system_clock::now() + std::chrono::hours(1);
        json claim = rossoctl::model::buildSandbox(options, std::chrono::system_clock::now());
        claim["spec"]["shutdownPolicy"] = "Delete";
        add(claim, {"claim-delete", "nothing-survives", "fail", "volumeClaimTemplates has", {}});
        options.name = "claim-retain";
        add(rossoctl::model::buildSandbox(options, std::chrono::system_clock::now()),
            {"claim-retain", "nothing-survives", "fail", "shutdownPolicy Retain", {}});
    }
    {
        // busybox's sh runs its applets whatever PATH says, so a missing cat or a missing
        // probe tool is a real image without them: distroless has no shell at all.
        json noCat = harness::smallSandbox(ns, "missing-cat");
        agent(noCat)["image"] = "gcr.io/distroless/static:nonroot";
        add(noCat, {"missing-cat", "service-account-token", "unproven", "", {}});
        json noTools = harness::smallSandbox(ns, "missing-tools");
        agent(noTools)["image"] = "gcr.io/distroless/static:nonroot";
        add(noTools, {"missing-tools", "egress", "unproven", "", {}});
        // A curl that never returns, first on the pod's PATH: the probe never runs it (issue 35
        // point 5: only the image's own directories), and a denial from the pod is forgeable.
        json stalled = harness::smallSandbox(ns, "stalled-probe");
        onlyTools(stalled, "sh cat",
                  "printf '#!/bin/sh\\nexec /bin/sleep 600\\n' > /tmp/bin/curl; "
                  "/bin/chmod +x /tmp/bin/curl;");
        add(stalled, {"stalled-probe", "egress", "unproven", "from the pod, forgeable", {}});
    }
    // The control first, on its own: in a burst of two dozen pod starts on two cores the
    // policy engine may take past the gate's 10 s for one pod (CI, 2026-12-07).
    for (const auto& sandbox : objects)
        if (sandbox["metadata"]["name"] == "hardened") admin.create(sandboxes(), hardNs, sandbox);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(hardNs, "hardened"); }, 180));
    for (const auto& sandbox : objects)
        if (sandbox["metadata"]["name"] != "hardened") admin.create(sandboxes(), ns, sandbox);
    // Egress open at the namespace level: a namespace with a quota and no NetworkPolicy.
    harness::TestNamespace open("vmatrix-open");
    harness::createCountedQuota(open.name(),
                                {{"apiVersion", "v1"},
                                 {"kind", "ResourceQuota"},
                                 {"metadata", {{"name", "quota"}}},
                                 {"spec", {{"hard", {{"pods", "5"}, {"limits.memory", "4Gi"}}}}}});
    admin.create(sandboxes(), open.name(), harness::smallSandbox(open.name(), "no-policy"));

    auto ready = [&](const std::string& space, const std::string& name) {
        auto sandbox = admin.getIfExists(sandboxes(), space, name);
        return sandbox && rossoctl::model::sandboxReady(*sandbox);
    };
    for (const auto& expected : cases) {
        INFO("sandbox " << expected.name << " Ready");
        REQUIRE(
            harness::eventually([&] { return ready(spaceOf(expected.name), expected.name); }, 180));
    }
    REQUIRE(harness::eventually([&] { return ready(open.name(), "no-policy"); }, 180));
    {
        // The template now asks for the token; the running pod has none.
        json templateToken = admin.get(sandboxes(), ns, "template-token");
        podSpec(templateToken)["automountServiceAccountToken"] = true;
        admin.update(sandboxes(), ns, templateToken);
        json templateHost = admin.get(sandboxes(), ns, "template-host");
        podSpec(templateHost)["hostNetwork"] = true;
        agent(templateHost)["securityContext"]["capabilities"] = {
            {"add", json::array({"SYS_ADMIN", "NET_ADMIN", "NET_RAW"})}};
        admin.update(sandboxes(), ns, templateHost);
    }
    const auto readyAt = std::chrono::steady_clock::now();

    // Verify every sandbox at once, each in its own rossoctl process (its own exit code); the
    // hardened control alone first: its restart's new pod, amid two dozen others, may wait past
    // the gate's 10 s for the policy engine (CI, 2026-12-07), which verify rightly calls unproven.
    std::vector<std::future<harness::RunResult>> runs;
    for (const auto& expected : cases) {
        std::vector<std::string> args{
            "sandbox", "verify", expected.name, "-n", spaceOf(expected.name), "-o", "json"};
        if (expected.extraArgs.empty()) args.insert(args.end(), {"--egress-target", outside});
        args.insert(args.end(), expected.extraArgs.begin(), expected.extraArgs.end());
        runs.push_back(std::async(std::launch::async,
                                  [args] { return harness::rossoctl(args, {}, {}, 300); }));
        if (expected.name == "hardened") runs.back().wait();
    }
    cases.push_back({"no-policy", "egress", "fail", "egress is not isolated", {}});
    runs.push_back(std::async(std::launch::async, [&] {
        return harness::rossoctl({"sandbox", "verify", "no-policy", "-n", open.name(),
                                  "--egress-target", outside, "-o", "json"},
                                 {}, {}, 300);
    }));

    std::string matrix;
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto& expected = cases[i];
        const auto result = runs[i].get();
        INFO("case " << expected.name << "\n" << result.out << result.err);
        const auto report = json::parse(result.out, nullptr, false);
        REQUIRE(report.is_object());
        std::string verdicts;
        for (const auto& check : report["checks"])
            verdicts +=
                check["id"].get<std::string>() + "=" + check["result"].get<std::string>() + " ";
        matrix += expected.name + ": exit " + std::to_string(result.exitCode) + ", " +
                  report["result"].get<std::string>() + " (" + verdicts + ")\n";
        if (expected.verdict == "pass") {
            CHECK(result.exitCode == 0);
            CHECK(report["result"] == "pass");
            continue;
        }
        CHECK(result.exitCode == 3);
        CHECK(report["result"] != "pass");
        for (const auto& check : report["checks"]) {
            if (check["id"] != expected.check) continue;
            CHECK(check["result"] == expected.verdict);
            CHECK_THAT(evidenceOf(check), Catch::Contains(expected.evidence));
            matrix += "    " + expected.check + ": " +
                      evidenceOf(check).substr(0, evidenceOf(check).find(expected.evidence) +
                                                      expected.evidence.size() + 60) +
                      "\n";
        }
    }
    const auto now = std::chrono::steady_clock::now();
    auto seconds = [](auto duration) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count() / 1000.0;
    };
    WARN("verify matrix, " << cases.size() << " sandboxes: ready after "
                           << seconds(readyAt - suiteStarted) << " s, verified in "
                           << seconds(now - readyAt) << " s\n"
                           << matrix);
}

// Issue 35's live attacks that need a namespace of their own: one whose policies are not
// enforced (the local cluster's documented switch: on the real node no policy engine at all, so
// the case runs alone, [outage]), one whose Pod Security level lets a container keep NET_RAW.
namespace {

bool sandboxIsReady(const std::string& space, const std::string& name) {
    auto sandbox = harness::admin().getIfExists(sandboxes(), space, name);
    return sandbox && rossoctl::model::sandboxReady(*sandbox);
}

// Verify's egress check of sandbox `name`, which must end unproven or failed (exit 3).
json egressOf(const std::string& space, const std::string& name,
              const std::vector<std::string>& extra) {
    std::vector<std::string> args{"sandbox",
                                  "verify",
                                  name,
                                  "-n",
                                  space,
                                  "--no-restart",
                                  "--egress-target",
                                  harness::outsideUrl(),
                                  "-o",
                                  "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto result = harness::rossoctl(args, {}, {}, 300);
    INFO(result.out << result.err);
    CHECK(result.exitCode == 3);
    const json report = json::parse(result.out, nullptr, false);
    REQUIRE(report.is_object());
    for (const auto& check : report["checks"])
        if (check["id"] == "egress") return check;
    FAIL("no egress check");
    return json();
}

}  // namespace

TEST_CASE("sandbox verify: the pod's tools and its PID space decide nothing",
          "[verify-matrix][outage]") {
    harness::TestNamespace ignored("verify35-ignored", false);
    auto created = harness::rossoctl({"project", "create", ignored.name(), "--no-check"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    harness::PoliciesUnenforced unenforced;
    auto& admin = harness::admin();
    // Point 5: the agent's PATH starts with a directory it writes, holding a curl that prints
    // the probe's failure markers.
    json liar = harness::smallSandbox(ignored.name(), "fake-curl");
    agent(liar)["command"] = {
        "sh", "-c",
        R"(mkdir -p /workspace/.local/bin && printf '#!/bin/sh\necho "curl: (7) Failed to connect: )"
        R"(Connection refused" >&2\nexit 7\n' > /workspace/.local/bin/curl && )"
        R"(chmod +x /workspace/.local/bin/curl && exec sleep infinity)"};
    agent(liar)["env"] = json::array(
        {{{"name", "PATH"}, {"value", "/workspace/.local/bin:/usr/local/bin:/usr/bin:/bin"}}});
    admin.create(sandboxes(), ignored.name(), liar);
    // Point 6's sandbox: hardened, its policies not enforced.
    admin.create(sandboxes(), ignored.name(), harness::smallSandbox(ignored.name(), "unenforced"));
    REQUIRE(harness::eventually([&] { return sandboxIsReady(ignored.name(), "fake-curl"); }, 180));
    REQUIRE(harness::eventually([&] { return sandboxIsReady(ignored.name(), "unenforced"); }, 180));
    SECTION("a fake curl on the pod's PATH is never the probe") {
        const json egress = egressOf(ignored.name(), "fake-curl", {});
        CHECK(egress["live"]["result"] == "fail");  // the image's /usr/bin/curl connected
        CHECK_THAT(evidenceOf(egress), Catch::Contains("connected to"));
    }
    SECTION("policies not enforced: the trusted probe sees the open egress") {
        const json trusted =
            egressOf(ignored.name(), "unenforced", {"--trusted-probe", "curlimages/curl:8"});
        CHECK(trusted["live"]["result"] == "fail");
        CHECK_THAT(evidenceOf(trusted), Catch::Contains("connected to"));
    }
}

// [outage]: its neighbour can hold NET_RAW, which leaves every sandbox on the node verified
// meanwhile unproven (attack 65 N2).
TEST_CASE("sandbox verify: a NET_RAW neighbour leaves the trusted probe's denial unproven",
          "[verify-matrix][outage]") {
    harness::TestNamespace baseline("verify35-baseline", false);
    auto created = harness::rossoctl(
        {"project", "create", baseline.name(), "--no-check", "--pod-security", "baseline"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    // Point 7: a neighbour running as root with the runtime's default capabilities.
    json neighbour = harness::smallSandbox(baseline.name(), "raw-neighbour");
    json root = agent(neighbour);
    root["name"] = "neighbour";
    root["image"] = "busybox:1.36";
    root["securityContext"] = {{"runAsUser", 0}, {"runAsNonRoot", false}};
    podSpec(neighbour)["containers"].push_back(root);
    podSpec(neighbour).erase("securityContext");
    harness::admin().create(sandboxes(), baseline.name(), neighbour);
    {
        INFO(harness::admin().get(sandboxes(), baseline.name(), "raw-neighbour").dump());
        REQUIRE(harness::eventually(
            [&] { return sandboxIsReady(baseline.name(), "raw-neighbour"); }, 180));
    }
    const json egress =
        egressOf(baseline.name(), "raw-neighbour", {"--trusted-probe", "curlimages/curl:8"});
    CHECK(egress["live"]["result"] == "unproven");
    CHECK_THAT(evidenceOf(egress),
               Catch::Contains("container neighbour keeps the default NET_RAW"));
    // Attack 65 N2: the same pod is a neighbour of every sandbox on its node: it answers ARP for
    // the cluster DNS's address, takes what they send there and relays it on its own egress.
    harness::TestNamespace restricted("verify65-beside", false);
    harness::createProject(restricted.name());
    json hardened = harness::smallSandbox(restricted.name(), "agent", "busybox:1.36");
    podSpec(hardened)["containers"][0]["command"] = {"sleep", "3600"};
    harness::admin().create(sandboxes(), restricted.name(), hardened);
    REQUIRE(harness::eventually([&] { return sandboxIsReady(restricted.name(), "agent"); }, 180));
    const auto [result, report] = harness::verifyTrusted(restricted.name(), "agent");
    INFO(result.out << result.err);
    CHECK(result.exitCode == 3);
    for (const char* id : {"egress", "service-account-token"}) {
        INFO(id);
        const json& check = harness::checkNamed(report, id);
        CHECK(check["static"]["result"] == "unproven");
        CHECK_THAT(evidenceOf(check),
                   Catch::Contains("pod " + baseline.name() + "/raw-neighbour") &&
                       Catch::Contains("can hold NET_RAW or NET_ADMIN: on the pods' shared "
                                       "network it answers ARP"));
    }
}

// Issue 35 point 8: the node's runtime applies seccomp as the spec says.
namespace {

// Verify's nothing-survives check of sandbox `name`, with the run's exit code (the keyring's
// part is read before any restart, so --no-restart still fails an open one).
std::pair<int, json> survivesOf(const std::string& space, const std::string& name, bool restart) {
    std::vector<std::string> args{
        "sandbox", "verify", name, "-n", space, "--egress-target", harness::outsideUrl(),
        "-o",      "json"};
    if (!restart) args.push_back("--no-restart");
    auto result = harness::rossoctl(args, {}, {}, 300);
    INFO(result.out << result.err);
    const json report = json::parse(result.out, nullptr, false);
    REQUIRE(report.is_object());
    for (const auto& check : report["checks"])
        if (check["id"] == "nothing-survives") return {result.exitCode, check};
    FAIL("no nothing-survives check");
    return {};
}

}  // namespace

// [outage]: its privileged namespace leaves every sandbox verified meanwhile unproven (K1).
TEST_CASE("sandbox verify: seccomp Unconfined lets the kernel keyring outlive the pod",
          "[realnode][verify-keyring][outage]") {
    // Privileged: Pod Security's baseline level refuses an explicit Unconfined profile.
    harness::TestNamespace baseline("verify35-keyring", false);
    auto created = harness::rossoctl(
        {"project", "create", baseline.name(), "--no-check", "--pod-security", "privileged"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    // busybox and curl have no keyctl: the add_key itself is not shown, the verdict is.
    json unconfined = harness::smallSandbox(baseline.name(), "unconfined");
    // The container's own profile (RuntimeDefault in rossoctl's template) overrides the pod's.
    podSpec(unconfined)["securityContext"]["seccompProfile"] = {{"type", "Unconfined"}};
    agent(unconfined)["securityContext"]["seccompProfile"] = {{"type", "Unconfined"}};
    harness::admin().create(sandboxes(), baseline.name(), unconfined);
    REQUIRE(
        harness::eventually([&] { return sandboxIsReady(baseline.name(), "unconfined"); }, 180));
    const auto [exitCode, survives] = survivesOf(baseline.name(), "unconfined", false);
    CHECK(exitCode == 3);
    CHECK(survives["result"] == "fail");
    CHECK(survives["live"]["result"] == "fail");
    CHECK_THAT(evidenceOf(survives), Catch::Contains("container agent (a process exec'd in it): "
                                                     "Seccomp: 0"));
}

TEST_CASE("sandbox verify: the hardened sandbox shows the runtime's seccomp filter in force",
          "[realnode][verify-keyring]") {
    harness::TestNamespace project("verify35-seccomp", false);
    auto created = harness::rossoctl({"project", "create", project.name(), "--no-check"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    harness::admin().create(sandboxes(), project.name(),
                            harness::smallSandbox(project.name(), "hardened"));
    REQUIRE(harness::eventually([&] { return sandboxIsReady(project.name(), "hardened"); }, 180));
    const auto [exitCode, survives] = survivesOf(project.name(), "hardened", true);
    INFO(survives.dump());
    CHECK(survives["result"] == "pass");
    CHECK_THAT(evidenceOf(survives),
               Catch::Contains("Seccomp: 2 (a filter): the runtime's default profile is in force"));
    CHECK_FALSE(evidenceOf(survives).find("Seccomp: 0") != std::string::npos);
}

TEST_CASE("sandbox verify: default-deny narrowed to Egress leaves ingress open: egress fails",
          "[realnode][verify-matrix]") {
    // Attack 59 A1: a tenant with `edit` keeps egress denied but drops Ingress from the
    // project's default-deny; every pod of the cluster may then connect in and read the agent.
    harness::TestNamespace project("verify59-ingress", false);
    auto created = harness::rossoctl({"project", "create", project.name(), "--no-check"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    json policy =
        harness::admin().get(resources::networkPolicies(), project.name(), "default-deny");
    policy["spec"]["policyTypes"] = json::array({"Egress"});
    harness::admin().update(resources::networkPolicies(), project.name(), policy);
    harness::admin().create(sandboxes(), project.name(),
                            harness::smallSandbox(project.name(), "open-in"));
    REQUIRE(harness::eventually([&] { return sandboxIsReady(project.name(), "open-in"); }, 180));
    const json egress = egressOf(project.name(), "open-in", {});
    CHECK(egress["result"] == "fail");
    CHECK(egress["static"]["result"] == "fail");
    CHECK_THAT(evidenceOf(egress), Catch::Contains("has Ingress in policyTypes") &&
                                       Catch::Contains("any pod of the cluster may connect in"));
}
