// Review 64 H3, M1, M2: a change made and undone before verify's end left the two reads equal,
// and verify certified what the pod had meanwhile. The server's record of changes since the
// start is read at the end; a pod's spec that changed, and a shutdown time a claim set, too.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::testing;

namespace {

const std::string kPolicies = "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies";

std::string event(const char* type, const json& object) {
    return json{{"type", type}, {"object", object}}.dump() + "\n";
}

json withVersion(json object, const std::string& version) {
    object["metadata"]["resourceVersion"] = version;
    return object;
}

// verify --no-restart of the hardened sandbox with `pod` as its pod and `routes` served first
// (a route given twice answers in order); its verdicts.
json verdictsWith(const std::function<void(TestHost&)>& routes,
                  const json& pod = verify_fixtures::hardenedPod("pod-uid-1"),
                  const json& box = verify_fixtures::sandbox()) {
    TestHost host;
    routes(host);
    verify_fixtures::serveHardened(host, "curl", box, pod, pod);
    verify_fixtures::runVerifyJson(host, {"--no-restart"});
    INFO(host.err.str());
    return verify_fixtures::verdicts(printedJson(host.out.str()));
}

// The same, where the last GET of `path` (verify's read at its end) answers `atEnd` and every
// one before it `before`, and a watch of it by name from `since` replays `changes`.
json verdictsWithEnd(const std::string& path, const json& before, const json& atEnd,
                     const std::string& since, const std::vector<std::string>& changes,
                     const json& pod, const json& box = verify_fixtures::sandbox()) {
    const std::string collection = path.substr(0, path.rfind('/'));
    const std::string name = path.substr(path.rfind('/') + 1);
    return verify_fixtures::verdictsChangedAtEnd(
        path, before, atEnd, pod, box, [&](TestHost& host) {
            host.server.onStream("GET",
                                 collection + "?watch=true&fieldSelector=metadata.name%3D" + name +
                                     "&resourceVersion=" + since,
                                 changes);
        });
}

// A service-account token of this cluster's issuer, hex-encoded (DNS labels carry it so).
std::string tokenHex() {
    const std::string token =
        verify_fixtures::jwt({{"iss", "https://kubernetes.default.svc.cluster.local"},
                              {"sub", "system:serviceaccount:team1:default"},
                              {"kubernetes.io", {{"namespace", "team1"}}}});
    std::string hex;
    for (unsigned char c : token) hex += fmt::format("{:02x}", c);
    return hex;
}

// A Service's ports whose names spell tokenHex() 11 letters at a time, behind tags that count
// up (p00-, p01-...), as env names sort them.
json tokenPorts() {
    const std::string hex = tokenHex();
    json ports = json::array();
    for (size_t at = 0, i = 0; at < hex.size(); at += 11, ++i)
        ports.push_back({{"name", fmt::format("p{:02}-{}", i, hex.substr(at, 11))},
                         {"port", 1000 + static_cast<int>(i)}});
    return ports;
}

std::string evidenceOf(const json& part) {
    return part["evidence"].dump();
}

}  // namespace

TEST_CASE(
    "review 64 H3: a NetworkPolicy added and removed while verify ran leaves egress "
    "unproven",
    "[verify][false-pass]") {
    const json open = json::parse(R"({"metadata": {"name": "allow-all", "resourceVersion": "11"},
        "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{}]}})");
    const json quiet = verdictsWith([](TestHost&) {});
    CHECK_THAT(evidenceOf(quiet["egress"]["static"]),
               !Catch::Contains("while verify ran") && !Catch::Contains("could not be read"));
    const json egress = verdictsWith([&](TestHost& host) {
        host.server.onStream("GET", kPolicies + "?watch=true&resourceVersion=10",
                             {event("ADDED", open), event("DELETED", withVersion(open, "12"))});
    })["egress"]["static"];
    CHECK(egress["result"] == "unproven");
    CHECK_THAT(egress["evidence"].dump(), Catch::Contains("allow-all (written, then undone)"));
    // A watch that ends before the server's progress passed the end's revision, cleanly or not
    // (review 66 H1, H2), each time it is taken up again: its record was not read in full.
    const json cut = verdictsWith([&](TestHost& host) {
        for (const char* since : {"10", "9"})
            host.server.onStream("GET", kPolicies + "?watch=true&resourceVersion=" + since,
                                 {verify_fixtures::progress("9")});
    })["egress"]["static"];
    CHECK(cut["result"] == "unproven");
    CHECK_THAT(evidenceOf(cut), Catch::Contains("ended before the version read at the end"));
    // A watch that ends early is taken up from where its record stood (CI, 2026-12-07): read in
    // full then.
    const json resumed = verdictsWith([&](TestHost& host) {
        host.server.onStream("GET", kPolicies + "?watch=true&resourceVersion=10",
                             {verify_fixtures::progress("9")});
        host.server.onStream("GET", kPolicies + "?watch=true&resourceVersion=9",
                             {verify_fixtures::progress("10")});
    })["egress"]["static"];
    CHECK_THAT(evidenceOf(resumed), !Catch::Contains("could not be read"));
    // The record gone (compacted): not read, so not ruled out.
    const json gone = verdictsWith([&](TestHost& host) {
        host.server.on("GET", kPolicies + "?watch=true&resourceVersion=10", 410,
                       R"j({"kind": "Status", "code": 410, "reason": "Expired",
                            "message": "too old resource version: 10 (40)"})j");
    })["egress"]["static"];
    CHECK(gone["result"] == "unproven");
    CHECK_THAT(gone["evidence"].dump(),
               Catch::Contains("could not be read") && Catch::Contains("too old resource version"));
    // Gone once (an API server restarted while verify ran starts its cache anew): the whole run
    // is made again, and the second one's record is read in full.
    TestHost host;
    host.server.on("GET", kPolicies + "?watch=true&resourceVersion=10", 410,
                   R"j({"kind": "Status", "code": 410, "reason": "Expired",
                        "message": "too old resource version: 10 (40)"})j");
    host.server.onStream("GET", kPolicies + "?watch=true&resourceVersion=10",
                         {verify_fixtures::progress()});
    verify_fixtures::serveHardened(host, "curl");
    verify_fixtures::runVerifyJson(host, {"--no-restart"});
    const json again = verify_fixtures::verdicts(printedJson(host.out.str()))["egress"]["static"];
    CHECK_THAT(evidenceOf(again), !Catch::Contains("could not be read"));
    // List, end list, watch (and the list that freshens the server's cache first): twice.
    CHECK(host.server.requestsTo("GET", kPolicies).size() == 8);
}

TEST_CASE(
    "review 64 H3: the pod's labels changed and changed back while verify ran leave "
    "egress unproven",
    "[verify][false-pass]") {
    const std::string path = verify_fixtures::kPods + "/orders";
    const json judged = withVersion(verify_fixtures::hardenedPod("pod-uid-1"), "100");
    json open = withVersion(judged, "101");
    open["metadata"]["labels"]["role"] = "open";
    const json back = withVersion(judged, "102");
    const json checks = verdictsWithEnd(path, judged, back, "100",
                                        {event("MODIFIED", open), event("MODIFIED", back)}, judged);
    CHECK(checks["egress"]["static"]["result"] == "unproven");
    CHECK_THAT(evidenceOf(checks["egress"]["static"]),
               Catch::Contains("pod orders's labels changed while verify ran"));
    // Only a status written between: nothing the checks judged changed.
    json running = withVersion(judged, "101");
    running["status"]["podIP"] = "10.0.0.9";
    const json status = verdictsWithEnd(
        path, judged, back, "100", {event("MODIFIED", running), event("MODIFIED", back)}, judged);
    CHECK_THAT(evidenceOf(status["egress"]["static"]), !Catch::Contains("while verify ran"));
    CHECK(status["limits"]["live"]["result"] == "pass");
    // The record ends before the version read at the end: not read in full.
    const json cut =
        verdictsWithEnd(path, judged, back, "100", {event("MODIFIED", running)}, judged);
    CHECK(cut["limits"]["live"]["result"] == "unproven");
    CHECK_THAT(evidenceOf(cut["limits"]["live"]),
               Catch::Contains("ended before the version read at the end"));
}

TEST_CASE(
    "review 64 M1: a container's image changed while verify ran leaves every check "
    "unproven",
    "[verify][false-pass]") {
    const json judged = withVersion(verify_fixtures::hardenedPod("pod-uid-1"), "100");
    json swapped = withVersion(judged, "101");
    swapped["spec"]["containers"][0]["image"] = "tenant/anything:latest";
    const json checks = verdictsWithEnd(verify_fixtures::kPods + "/orders", judged, swapped, "100",
                                        {event("MODIFIED", swapped)}, judged);
    for (const char* id : {"service-account-token", "egress", "limits"}) {
        INFO(id);
        CHECK(checks[id]["live"]["result"] == "unproven");
        CHECK_THAT(evidenceOf(checks[id]["live"]),
                   Catch::Contains("pod orders's spec changed while verify ran"));
    }
}

TEST_CASE(
    "review 64 H3, M2: the Sandbox's versions between; a shutdown time a claim sets is no "
    "change",
    "[verify][false-pass]") {
    const std::string path = verify_fixtures::kSandboxes + "/orders";
    const json pod = verify_fixtures::hardenedPod("pod-uid-1");
    const json box = withVersion(verify_fixtures::sandbox(), "50");
    // The template made to automount a token and made back before the end.
    json token = withVersion(box, "51");
    token["spec"]["podTemplate"]["spec"]["automountServiceAccountToken"] = true;
    const json back = withVersion(box, "52");
    const json undone = verdictsWithEnd(
        path, box, back, "50", {event("MODIFIED", token), event("MODIFIED", back)}, pod, box);
    CHECK(undone["service-account-token"]["static"]["result"] == "unproven");
    CHECK_THAT(evidenceOf(undone["service-account-token"]["static"]),
               Catch::Contains("sandbox orders's spec changed while verify ran"));
    // A claim's shutdown time: the spare's run only got shorter; one moved later is a change.
    json claimed = withVersion(box, "51");
    claimed["spec"]["shutdownTime"] = "2030-01-01T00:00:00Z";
    const json shorter =
        verdictsWithEnd(path, box, claimed, "50", {event("MODIFIED", claimed)}, pod, box);
    CHECK(shorter["service-account-token"]["static"]["result"] == "pass");
    // A time no controller reads sorts first as text (review 66 M1): a change.
    json unreadable = withVersion(box, "51");
    unreadable["spec"]["shutdownTime"] = "2029-01-01T00:00:0005Z";
    CHECK(verdictsWithEnd(path, box, unreadable, "50", {event("MODIFIED", unreadable)}, pod,
                          box)["service-account-token"]["static"]["result"] == "unproven");
    json bounded = box;
    bounded["spec"]["shutdownTime"] = "2029-01-01T00:00:00Z";
    const json later =
        verdictsWithEnd(path, bounded, claimed, "50", {event("MODIFIED", claimed)}, pod, bounded);
    CHECK(later["service-account-token"]["static"]["result"] == "unproven");
}

TEST_CASE(
    "review 64 H3: a Secret the pod reads, missing at the start and at the end but made "
    "between, leaves the token unproven",
    "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    pod["spec"]["volumes"].push_back(
        {{"name", "cfg"}, {"secret", {{"secretName", "cfg"}, {"optional", true}}}});
    const json made = json::parse(R"({"metadata": {"name": "cfg", "resourceVersion": "20"},
        "type": "kubernetes.io/service-account-token", "data": {}})");
    const json token = verdictsWith(
        [&](TestHost& host) {
            host.server.onStream("GET",
                                 "/api/v1/namespaces/team1/secrets?watch=true&resourceVersion=10",
                                 {event("ADDED", made), event("DELETED", withVersion(made, "21"))});
        },
        pod)["service-account-token"]["static"];
    CHECK(token["result"] == "unproven");
    CHECK_THAT(token["evidence"].dump(), Catch::Contains("Secret cfg (made, then deleted)"));
}

TEST_CASE("attack 66 N1: a NET_RAW neighbour made and gone while verify ran leaves it unproven",
          "[verify][false-pass]") {
    // Root with the runtime's default capabilities in a baseline namespace: it answers ARP for
    // the cluster DNS's address; made once verify had listed the cluster's pods.
    const json store = json::parse(R"({"metadata": {"name": "store", "namespace": "team2",
        "uid": "store-uid", "resourceVersion": "11"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "py", "image": "python"}]},
        "status": {"phase": "Running"}})");
    const json quiet = verdictsWith([](TestHost&) {});
    for (const char* id : {"service-account-token", "egress", "nothing-survives"})
        CHECK_THAT(evidenceOf(quiet[id]["static"]), !Catch::Contains("while verify ran"));
    const json checks = verdictsWith([&](TestHost& host) {
        host.server.onStream("GET", "/api/v1/pods?watch=true&resourceVersion=10",
                             {event("ADDED", store), event("DELETED", withVersion(store, "12")),
                              verify_fixtures::progress("12")});
    });
    for (const char* id : {"service-account-token", "egress", "nothing-survives"}) {
        INFO(id);
        CHECK(checks[id]["static"]["result"] == "unproven");
        CHECK_THAT(evidenceOf(checks[id]["static"]),
                   Catch::Contains("pods made or changed while verify ran reach a node's files or "
                                   "its pod network") &&
                       Catch::Contains("pod team2/store (container py keeps"));
    }
    // Its record not read in full, however often taken up again: not ruled out.
    const json cut = verdictsWith([&](TestHost& host) {
        for (const char* since : {"10", "9"})
            host.server.onStream("GET",
                                 std::string("/api/v1/pods?watch=true&resourceVersion=") + since,
                                 {verify_fixtures::progress("9")});
    });
    CHECK(cut["egress"]["static"]["result"] == "unproven");
    CHECK_THAT(evidenceOf(cut["egress"]["static"]),
               Catch::Contains("the changes to the cluster's pods while verify ran could not be "
                               "read"));
}

TEST_CASE("attack 66 T3: Services whose names spell a token, made while verify ran",
          "[verify][false-pass]") {
    const std::string hex = tokenHex();
    std::vector<std::string> changes;
    for (size_t at = 0, i = 0; at < hex.size(); at += 58, ++i)
        changes.push_back(
            event("ADDED", {{"metadata",
                             {{"name", fmt::format("t{:02}-{}", i, hex.substr(at, 58))},
                              {"namespace", "team2"},
                              // Below the end's revision ("10" here, as every list): before it.
                              {"resourceVersion", "9"}}},
                            {"spec", {{"clusterIP", fmt::format("10.96.77.{}", i + 1)}}}}));
    changes.push_back(verify_fixtures::progress("99"));
    const json token3 = verdictsWith([&](TestHost& host) {
        host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({}));
        host.server.onStream("GET", "/api/v1/services?watch=true&resourceVersion=10", changes);
    })["service-account-token"]["static"];
    INFO(token3.dump(2));
    CHECK(token3["result"] != "pass");
    CHECK_THAT(evidenceOf(token3),
               Catch::Contains("with the 8 Services written while verify ran (attack 66 T3)"));
    CHECK(evidenceOf(token3).find(hex.substr(0, 40)) == std::string::npos);
}

TEST_CASE("attack 66 S1: a pod mounting the pod's claim, made and ended while verify ran",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    pod["spec"]["volumes"].push_back(
        {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "orders-data"}}}});
    // It ran (its first state) and had ended by its last: it carried what the claim held.
    const json carrier = json::parse(R"({"metadata": {"name": "carrier", "namespace": "team1",
        "uid": "carrier-uid", "resourceVersion": "9"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c"}],
                 "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "orders-data"}}]},
        "status": {"phase": "Running"}})");
    json done = carrier;
    done["status"]["phase"] = "Succeeded";
    const json checks = verdictsWith(
        [&](TestHost& host) {
            host.server.onStream("GET", "/api/v1/pods?watch=true&resourceVersion=10",
                                 {event("ADDED", carrier), event("MODIFIED", done),
                                  event("DELETED", done), verify_fixtures::progress("12")});
        },
        pod);
    for (const char* id : {"service-account-token", "egress", "nothing-survives"}) {
        INFO(id);
        CHECK(checks[id]["static"]["result"] != "pass");
        CHECK_THAT(evidenceOf(checks[id]["static"]),
                   Catch::Contains("while verify ran, pod team1/carrier mounts claim orders-data"));
    }
}

TEST_CASE("review 67 H3: pod hostnames a headless Service publishes, made while verify ran",
          "[verify][false-pass]") {
    const std::string hex = tokenHex();
    const json container = {{"name", "c"},
                            {"securityContext",
                             {{"runAsNonRoot", true},
                              {"capabilities", {{"drop", {"ALL"}}}},
                              {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
    std::vector<std::string> changes;
    for (size_t at = 0, i = 0; at < hex.size(); at += 58, ++i)
        changes.push_back(
            event("ADDED", {{"metadata",
                             {{"name", fmt::format("c{:02}", i)},
                              {"namespace", "team2"},
                              {"uid", fmt::format("c-{}", i)},
                              {"resourceVersion", "9"}}},
                            {"spec",
                             {{"hostname", fmt::format("h{:02}-{}", i, hex.substr(at, 58))},
                              {"subdomain", "h"},
                              {"containers", json::array({container})}}},
                            {"status", {{"phase", "Running"}}}}));
    changes.push_back(verify_fixtures::progress("99"));
    const json headless = {{"metadata", {{"name", "h"}, {"namespace", "team2"}}},
                           {"spec", {{"clusterIP", "None"}}}};
    const json token3 = verdictsWith([&](TestHost& host) {
        host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({headless}));
        host.server.onStream("GET", "/api/v1/pods?watch=true&resourceVersion=10", changes);
    })["service-account-token"]["static"];
    INFO(token3.dump(2));
    CHECK(token3["result"] == "fail");
    CHECK_THAT(evidenceOf(token3),
               Catch::Contains("pod hostnames written while verify ran (attack 66 T3)"));
    CHECK(evidenceOf(token3).find(hex.substr(0, 40)) == std::string::npos);
}

TEST_CASE(
    "review 67 L2: a Service that claimed the API server's address while verify ran, then let "
    "it go",
    "[verify][false-pass][gate]") {
    const json kubernetes = json::parse(R"({"metadata": {"name": "kubernetes", "namespace":
        "default"}, "spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
        "ports": [{"port": 443}]}})");
    json decoy = json::parse(R"({"metadata": {"name": "decoy", "namespace": "team1",
        "resourceVersion": "9"}, "spec": {"clusterIP": "10.96.0.21", "externalIPs":
        ["10.96.0.1"], "ports": [{"port": 443}]}})");
    json released = decoy;
    released["spec"].erase("externalIPs");
    for (const bool claimed : {false, true}) {
        const json egress = verdictsWith([&](TestHost& host) {
            host.server.onJson("GET", "/api/v1/namespaces/default/services/kubernetes", 200,
                               kubernetes);
            host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({}));
            host.server.onStream(
                "GET", "/api/v1/services?watch=true&resourceVersion=10",
                {event("ADDED", claimed ? decoy : released), event("MODIFIED", released),
                 event("DELETED", released), verify_fixtures::progress("99")});
        })["egress"]["live"];
        INFO(egress.dump(2));
        // Its pod's own probe leaves the live half unproven anyway: the gate's line decides.
        CHECK((evidenceOf(egress).find(
                   "Service team1/decoy claims 10.96.0.1, the API server's address the "
                   "gate connects to, as an external IP: its pods may refuse the gate's "
                   "connect before the pod's policies hold (a version written while "
                   "verify ran)") != std::string::npos) == claimed);
    }
}

TEST_CASE(
    "review 67 L3: port names written while verify ran reach the template's pod through its "
    "service links, though the first pod has none",
    "[verify][false-pass]") {
    const json ports = tokenPorts();
    const json service = {
        {"metadata", {{"name", "svc"}, {"namespace", "team1"}, {"resourceVersion", "9"}}},
        {"spec", {{"clusterIP", "10.96.77.1"}, {"ports", ports}}}};
    for (const bool links : {false, true}) {
        json box = verify_fixtures::sandbox();
        box["spec"]["podTemplate"]["spec"]["enableServiceLinks"] = links;
        const json token3 = verdictsWith(
            [&](TestHost& host) {
                host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({}));
                host.server.onStream("GET", "/api/v1/services?watch=true&resourceVersion=10",
                                     {event("ADDED", service), verify_fixtures::progress("99")});
            },
            verify_fixtures::hardenedPod("pod-uid-1"), box)["service-account-token"]["static"];
        INFO(token3.dump(2));
        // Their numbers can carry it either way (attack 58 T7); their names only through links.
        CHECK((evidenceOf(token3).find("the port names of Service team1/svc (in the pod's env "
                                       "through service links) joined") != std::string::npos) ==
              links);
    }
}

TEST_CASE("review 67 H2: ports that spelled a token while verify ran, then were written back",
          "[verify][false-pass]") {
    const json ports = tokenPorts();
    const json plain = {
        {"metadata", {{"name", "svc"}, {"namespace", "team1"}, {"resourceVersion", "9"}}},
        {"spec", {{"clusterIP", "10.96.77.1"}, {"ports", {{{"name", "http"}, {"port", 80}}}}}}};
    json spelling = plain;
    spelling["spec"]["ports"] = ports;
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    pod["spec"]["enableServiceLinks"] = true;
    for (const bool rewritten : {false, true}) {
        const json token3 = verdictsWith(
            [&](TestHost& host) {
                host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({}));
                host.server.onStream(
                    "GET", "/api/v1/services?watch=true&resourceVersion=10",
                    {event("ADDED", plain), event("MODIFIED", rewritten ? spelling : plain),
                     event("MODIFIED", plain), verify_fixtures::progress("99")});
            },
            pod)["service-account-token"]["static"];
        INFO(token3.dump(2));
        CHECK((token3["result"] == "pass") == !rewritten);
        CHECK((evidenceOf(token3).find("the port names of Service team1/svc (in the pod's env "
                                       "through service links) joined") != std::string::npos) ==
              rewritten);
    }
}

TEST_CASE(
    "review 68 H5: a token split over three Services' port names, each written and written back "
    "while verify ran",
    "[verify][false-pass]") {
    const std::string hex = tokenHex();
    const size_t pieces = (hex.size() + 10) / 11;
    std::vector<json> spelling(3), plain(3);
    for (size_t s = 0; s < 3; ++s) {
        const std::string name = fmt::format("svc-{}", static_cast<char>('a' + s));
        plain[s] = {
            {"metadata", {{"name", name}, {"namespace", "team1"}, {"resourceVersion", "9"}}},
            {"spec",
             {{"clusterIP", fmt::format("10.96.77.{}", s + 1)},
              {"ports", {{{"name", "http"}, {"port", 80}}}}}}};
        spelling[s] = plain[s];
        spelling[s]["spec"]["ports"] = json::array();
    }
    for (size_t i = 0; i < pieces; ++i)
        spelling[i * 3 / pieces]["spec"]["ports"].push_back(
            {{"name", fmt::format("p{:02}-{}", i, hex.substr(i * 11, 11))}, {"port", 80}});
    std::vector<std::string> changes;
    for (size_t s = 0; s < 3; ++s) changes.push_back(event("ADDED", plain[s]));
    for (size_t s = 0; s < 3; ++s) changes.push_back(event("MODIFIED", spelling[s]));
    for (size_t s = 0; s < 3; ++s) changes.push_back(event("MODIFIED", plain[s]));
    changes.push_back(verify_fixtures::progress("99"));
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    pod["spec"]["enableServiceLinks"] = true;
    const json token3 = verdictsWith(
        [&](TestHost& host) {
            host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({}));
            host.server.onStream("GET", "/api/v1/services?watch=true&resourceVersion=10", changes);
        },
        pod)["service-account-token"]["static"];
    INFO(token3.dump(2));
    CHECK(token3["result"] != "pass");
    CHECK_THAT(evidenceOf(token3), Catch::Contains("Services (in the pod's env through service "
                                                   "links) joined in env order"));
}

TEST_CASE("review 68 M3: a Services replay not read leaves the gate's target unproven too",
          "[verify][false-pass][gate]") {
    const json checks = verdictsWith([](TestHost& host) {
        host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list({}));
        // The record is cut short: no bookmark at the end's revision.
        host.server.onStream("GET", "/api/v1/services?watch=true&resourceVersion=10", {});
    });
    INFO(checks.dump(2));
    CHECK_THAT(evidenceOf(checks["egress"]["live"]),
               Catch::Contains("one may have claimed the API server's address the gate connects "
                               "to as an external IP"));
}
