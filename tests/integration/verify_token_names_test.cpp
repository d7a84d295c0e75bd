// Attack 57 on the local cluster (T5, T5b, T6): a real service-account token (a TokenRequest)
// spelled out by what the pod reads besides its spec's values, rebuilt by the pod itself: the
// names of Services, in its env through service links and as PTR answers of the cluster DNS,
// and the keys of annotations and labels a downwardAPI volume shows. Verify must not pass it.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verify_report.hpp"

using harness::checkNamed;
using harness::evidenceOf;
using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace tok57 {

std::string hexOf(const std::string& text) {
    std::string hex;
    for (unsigned char c : text) hex += fmt::format("{:02x}", c);
    return hex;
}

// A real token of ServiceAccount atk-tenant of ns (no rights needed: it authenticates).
std::string realToken(const std::string& ns) {
    auto& admin = harness::admin();
    admin.create(
        resources::serviceAccounts(), ns,
        {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "atk-tenant"}}}});
    return harness::issueToken(ns, "atk-tenant");
}

void createReady(const std::string& ns, const json& sandbox) {
    harness::admin().create(harness::sandboxRef(), ns, sandbox);
    const std::string name = sandbox["metadata"]["name"];
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, name); }, 180));
}

// What `sh -c script` prints in the sandbox's pod.
std::string inPod(const std::string& ns, const std::string& sandbox, const std::string& script) {
    const std::string pod = rossoctl::model::sandboxPodName(harness::getSandbox(ns, sandbox));
    auto ran =
        harness::run({harness::kubectlPath(), "exec", "-n", ns, pod, "--", "sh", "-c", script}, {},
                     {{"KUBECONFIG", harness::kubeconfigPath()}}, 120);
    INFO(ran.exitCode << ": " << ran.err);
    return ran.out;
}

// `sandbox verify NAME --no-restart -o json`: exit 3, the token check failed, naming `names`, and
// no 16 characters of the token or its hex printed.
void verifyFails(const std::string& ns, const std::string& sandbox, const std::string& token,
                 const std::vector<std::string>& names) {
    auto verified = harness::rossoctl(
        {"sandbox", "verify", sandbox, "-n", ns, "--no-restart", "-o", "json"}, {}, {}, 300);
    INFO(verified.out << verified.err);
    CHECK(verified.exitCode == 3);
    const json report = json::parse(verified.out);
    const json& check = checkNamed(report, "service-account-token");
    CHECK(check["result"] == "fail");
    const std::string evidence = evidenceOf(check);
    for (const auto& name : names) CHECK_THAT(evidence, Catch::Contains(name));
    const std::string printed = verified.out + verified.err, hex = hexOf(token);
    for (size_t at = token.find('.') + 1; at + 16 <= token.size(); at += 8)
        CHECK(printed.find(token.substr(at, 16)) == std::string::npos);
    for (size_t at = 0; at + 16 <= hex.size(); at += 8)
        CHECK(printed.find(hex.substr(at, 16)) == std::string::npos);
}

}  // namespace tok57

using namespace tok57;

TEST_CASE(
    "sandbox verify: a real token over Service names, read from the env (service links) and by "
    "PTR from the cluster DNS (attack 57 T5, T5b)",
    "[verify][token-places][outage]") {
    // [outage]: run alone, as attack 54 T2's case: while these Services exist every pod of the
    // cluster can read the token by PTR, and every other verify fails (rightly).
    harness::TestNamespace project("tok57s", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    const std::string token = realToken(ns);
    const std::string hex = hexOf(token);
    // svclinks.yaml: selector-less Services `sNN-<59 hex>`.
    std::vector<std::string> names;
    for (size_t at = 0; at < hex.size(); at += 59)
        names.push_back(fmt::format("s{:02}-{}", names.size(), hex.substr(at, 59)));
    REQUIRE(names.size() < 100);
    std::string addresses;
    for (const auto& name : names) {
        const json created = harness::admin().create(
            resources::services(), ns,
            {{"apiVersion", "v1"},
             {"kind", "Service"},
             {"metadata", {{"name", name}}},
             {"spec", {{"selector", {{"no-such", "pod"}}}, {"ports", {{{"port", 80}}}}}}});
        addresses += created["spec"].value("clusterIP", "") + " ";
    }
    json links = harness::smallSandbox(ns, "links", "busybox:1.36");
    links["spec"]["podTemplate"]["spec"].erase("enableServiceLinks");  // the API's default: true
    createReady(ns, links);
    createReady(ns, harness::smallSandbox(ns, "ptr", "busybox:1.36"));  // enableServiceLinks false

    // The pods rebuild the token: from env (decode-links.sh) and by PTR (decode-ptr.sh).
    CHECK(inPod(ns, "links",
                R"sh(printf "$(env | grep '^S[0-9][0-9]_.*_SERVICE_HOST=' | sort | )sh"
                R"sh(sed 's/^S[0-9][0-9]_//; s/_SERVICE_HOST=.*//' | tr -d '\n' | tr A-F a-f | )sh"
                R"sh(sed 's/../\\x&/g')")sh") == token);
    CHECK(inPod(ns, "ptr",
                "printf \"$(for ip in " + addresses +
                    R"sh(; do nslookup $ip 2>/dev/null | )sh"
                    R"sh(sed -n 's/.*name = s[0-9][0-9]-\([0-9a-f]*\)\..*/\1/p'; done | )sh"
                    R"sh(tr -d '\n' | sed 's/../\\x&/g')")sh") == token);

    verifyFails(ns, "links", token,
                {fmt::format("the names of namespace {}'s", ns), "service links"});
    verifyFails(ns, "ptr", token, {fmt::format("the names of namespace {}'s", ns), "PTR"});
    for (const auto& name : names) harness::admin().remove(resources::services(), ns, name);
}

TEST_CASE(
    "sandbox verify: a real token over annotation and label keys a downwardAPI volume shows "
    "(attack 57 T6)",
    "[verify][token-places]") {
    harness::TestNamespace project("tok57k", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    const std::string token = realToken(ns);
    const std::string hex = hexOf(token);
    // annkeys: keys `aNN.<60 hex>.<60 hex>.<60 hex>.<60 hex>/x` (a prefix of at most 253).
    json keys = json::object();
    for (size_t at = 0; at < hex.size(); at += 240) {
        std::string key = fmt::format("a{:02}", keys.size());
        for (size_t label = at; label < std::min(at + 240, hex.size()); label += 60)
            key += "." + hex.substr(label, 60);
        keys[key + "/x"] = "1";
    }
    json sandbox = harness::smallSandbox(ns, "keys", "busybox:1.36");
    json& podTemplate = sandbox["spec"]["podTemplate"];
    podTemplate["metadata"]["annotations"] = keys;
    for (const auto& [key, value] : keys.items()) podTemplate["metadata"]["labels"][key] = value;
    podTemplate["spec"]["volumes"].push_back(
        {{"name", "meta"},
         {"downwardAPI",
          {{"items",
            json::array(
                {{{"path", "annotations"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}},
                 {{"path", "labels"}, {"fieldRef", {{"fieldPath", "metadata.labels"}}}}})}}}});
    podTemplate["spec"]["containers"][0]["volumeMounts"].push_back(
        {{"name", "meta"}, {"mountPath", "/meta"}, {"readOnly", true}});
    createReady(ns, sandbox);

    // decode-ann.sh, for each file.
    for (const char* file : {"annotations", "labels"})
        CHECK(inPod(ns, "keys",
                    fmt::format(R"sh(printf "$(grep '^a[0-9][0-9]\.' /meta/{} | sort | )sh"
                                R"sh(sed 's/^a[0-9][0-9]\.//; s#/x=.*##' | tr -d '.\n' | )sh"
                                R"sh(sed 's/../\\x&/g')")sh",
                                file)) == token);
    verifyFails(
        ns, "keys", token,
        {"pod volumes meta annotations keys joined", "pod volumes meta labels keys joined"});
}
