// Output parity and error text (issue 21 points 5, 6, 7, 9): what writes print with -o, templates
// under -w, what verify's -o takes and prints, no internal URL in an error, gc's and project
// create's sentences, and the -l/-o/--dry-run=server paths the other tests leave out.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kNamespaces = "/api/v1/namespaces";
const std::string kTeam1 = kNamespaces + "/team1";
const std::string kLimitRanges = kTeam1 + "/limitranges";
const std::string kServices = kTeam1 + "/services";
const std::string kPods = kTeam1 + "/pods";
const std::string kDeployments = "/apis/apps/v1/namespaces/team1/deployments";
const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kRuntimes = "/apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes";
const std::string kPolicies = "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies";
const json kManagedFields = json::array({{{"manager", "rossoctl"}, {"operation", "Apply"}}});

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A List of items (a vector: a braced single json would be copied, not wrapped).
json list(const std::vector<json>& items, const std::string& version = "10") {
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", version}}}, {"items", items}};
}

// What a server returns for a write: the object with its apply bookkeeping.
json written(const std::string& kind, const std::string& name) {
    return {{"kind", kind},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"resourceVersion", "1"},
              {"managedFields", kManagedFields}}}};
}

json sandboxObject(const std::string& name, const std::string& version, const std::string& tier) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "uid-" + name},
              {"resourceVersion", version},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels", {{"tier", tier}, {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"spec", json::object()}};
}

json projectNamespace(const std::string& name, const std::string& version) {
    return {{"metadata",
             {{"name", name},
              {"resourceVersion", version},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels",
               {{"rossoctl.dev/sandbox-project", "true"},
                {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"status", {{"phase", "Active"}}}};
}

// Ctrl-C once the `count`-th watch request has been sent.
void cancelOnWatch(TestHost& host, int count) {
    auto seen = std::make_shared<int>(0);
    host.server.onRequest = [&host, seen, count](const kube::HttpRequest& request) {
        if (request.url.find("watch=true") != std::string::npos && ++*seen >= count)
            host.cancel.cancel();
    };
}

// agents import from-image --name orders (a Deployment and its AgentRuntime), each write
// answered with the object and its managedFields.
void serveImport(TestHost& host) {
    host.serveGroups();
    host.server.onJson("GET", kLimitRanges, 200, list({}));
    host.server.onJson("POST", kDeployments, 201, written("Deployment", "orders"));
    host.server.onJson("POST", kServices, 201, written("Service", "orders"));
    host.server.onJson("POST", kRuntimes, 201, written("AgentRuntime", "orders"));
}

const std::vector<std::string> kImport = {"agents", "import",           "from-image", "--name",
                                          "orders", "--containerImage", "nginx"};

std::vector<std::string> importWith(std::vector<std::string> extra) {
    std::vector<std::string> args = kImport;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

// project create team1 writes (server-side apply), answered with managedFields; the quota
// counted, so nothing waits.
void serveProjectCreate(TestHost& host) {
    host.server.on("GET", kTeam1, 404, testing::kNotFoundBody);
    for (const std::string& path : {kTeam1, kTeam1 + "/resourcequotas/sandbox-quota",
                                    kTeam1 + "/limitranges/sandbox-limits", kPolicies + "/*"})
        host.server.onJson("PATCH", path, 201, written("Object", "x"));
    json quota = {{"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", "3"}}},
                  {"status", {{"hard", {{"pods", "20"}}}}}};
    host.server.onJson("GET", kTeam1 + "/resourcequotas", 200, list({quota}));
    // A cluster DNS that answers cluster names only: no DNS warning among the ones checked here.
    host.server.onJson("GET", "/api/v1/namespaces/kube-system/configmaps/coredns", 200,
                       {{"data", {{"Corefile", ".:53 {\n    kubernetes cluster.local\n}\n"}}}});
}

}  // namespace

// --- (a) a write's -o json/yaml hides managedFields unless --show-managed-fields -------------

TEST_CASE("agents import -o yaml/json hides managedFields; --show-managed-fields keeps them",
          "[output-parity][agents]") {
    for (const auto& extra : std::vector<std::vector<std::string>>{
             {"-o", "yaml"}, {"--dry-run=server", "-o", "json"}}) {
        TestHost host;
        serveImport(host);
        REQUIRE(host.run(importWith(extra)) == 0);
        INFO(host.out.str());
        CHECK_FALSE(contains(host.out.str(), "managedFields"));
        CHECK(contains(host.out.str(), "orders"));
    }
    TestHost shown;
    serveImport(shown);
    REQUIRE(shown.run(importWith({"-o", "json", "--show-managed-fields"})) == 0);
    const json printed = testing::printedJson(shown.out.str());
    CHECK(printed["kind"] == "List");
    REQUIRE(printed["items"].size() == 2);
    CHECK(printed["items"][0]["metadata"]["managedFields"] == kManagedFields);
}

TEST_CASE("project create -o yaml hides managedFields; --show-managed-fields keeps them",
          "[output-parity][project]") {
    TestHost hidden;
    serveProjectCreate(hidden);
    REQUIRE(hidden.run({"project", "create", "team1", "--no-check", "-o", "yaml"}) == 0);
    CHECK(contains(hidden.out.str(), "kind: List"));
    CHECK_FALSE(contains(hidden.out.str(), "managedFields"));

    TestHost shown;
    serveProjectCreate(shown);
    REQUIRE(shown.run({"project", "create", "team1", "--no-check", "-o", "json",
                       "--show-managed-fields"}) == 0);
    const json printed = testing::printedJson(shown.out.str());
    REQUIRE_FALSE(printed["items"].empty());
    for (const auto& item : printed["items"])
        CHECK(item["metadata"]["managedFields"] == kManagedFields);
}

// --- (b) -w with a template prints each event's object through it ------------------------------

TEST_CASE("sandbox list -w -o jsonpath / custom-columns prints each change through the template",
          "[output-parity][sandbox][watch]") {
    auto serve = [](TestHost& host) {
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list({sandboxObject("orders", "5", "web")}));
        host.server.onJson("GET", kPods, 200, list({}));
        host.server.onStream("GET", kSandboxes + "?watch=true",
                             {watchEvent("ADDED", sandboxObject("billing", "11", "db")),
                              watchEvent("DELETED", sandboxObject("orders", "12", "web"))});
        cancelOnWatch(host, 2);
    };
    TestHost path;
    serve(path);
    CHECK(path.run({"sandbox", "list", "-w", "-o",
                    R"(jsonpath={.metadata.name}={.metadata.labels.tier}{"\n"})"}) == 130);
    CHECK(path.out.str() == "orders=web\nbilling=db\norders=web\n");

    TestHost columns;
    serve(columns);
    CHECK(columns.run({"sandbox", "list", "--watch", "-o",
                       "custom-columns=NAME:.metadata.name,TIER:.metadata.labels.tier"}) == 130);
    CHECK(columns.out.str() == "NAME     TIER\norders   web\nbilling   db\norders   web\n");

    TestHost only;  // --watch-only: the changes alone; --no-headers: no header at all
    serve(only);
    CHECK(only.run({"sandbox", "list", "--watch-only", "--no-headers", "-o",
                    "custom-columns=NAME:.metadata.name"}) == 130);
    CHECK(only.out.str() == "billing\norders\n");
}

TEST_CASE("project list -w -o jsonpath prints each change through the template",
          "[output-parity][project][watch]") {
    TestHost host;
    host.server.onJson("GET", kNamespaces, 200, list({projectNamespace("team1", "7")}));
    host.server.onStream("GET", kNamespaces + "?watch=true",
                         {watchEvent("ADDED", projectNamespace("team2", "11"))});
    cancelOnWatch(host, 2);
    CHECK(host.run({"project", "list", "-w", "-o", R"(jsonpath={.kind}/{.metadata.name}{"\n"})"}) ==
          130);
    CHECK(host.out.str() == "Namespace/team1\nNamespace/team2\n");
}

TEST_CASE("a bad template under -w is still a usage error, nothing sent",
          "[output-parity][watch]") {
    testing::checkUsageErrors({{"sandbox", "list", "-w", "-o", "custom-columns=NAME"},
                               {"project", "list", "-w", "-o", "jsonpath={.metadata[name"}});
}

// --- (c) verify takes exactly the -o it prints ------------------------------------------------

TEST_CASE("sandbox verify --help lists only its formats; flags it would ignore are unknown",
          "[output-parity][verify]") {
    TestHost host;
    const std::string help = host.help({"sandbox", "verify"});
    INFO(help);
    CHECK(contains(help, "table|json|junit|sarif"));
    CHECK_FALSE(contains(help, "jsonpath"));
    CHECK_FALSE(contains(help, "custom-columns"));
    CHECK_FALSE(contains(help, "--sort-by"));
    CHECK_FALSE(contains(help, "--show-managed-fields"));
    for (const auto& flag : std::vector<std::vector<std::string>>{{"--sort-by", ".metadata.name"},
                                                                  {"--show-managed-fields"}}) {
        TestHost unknown;
        std::vector<std::string> args = {"sandbox", "verify", "orders"};
        args.insert(args.end(), flag.begin(), flag.end());
        CHECK(unknown.run(args) == kExitUsage);
        CHECK(contains(unknown.err.str(), "unknown flag: " + flag.front()));
        CHECK(unknown.server.requests.empty());
    }
    TestHost templated;
    CHECK(templated.run({"sandbox", "verify", "orders", "-o", "jsonpath={.a}"}) == kExitUsage);
    CHECK(templated.server.requests.empty());
}

// --- (d) verify -o json of several sandboxes: one List -----------------------------------------

TEST_CASE("sandbox verify A B -o json and --all print one List of the reports",
          "[output-parity][verify]") {
    TestHost two;
    two.serveSandboxGroup();  // neither exists: each report says why
    CHECK(two.run({"sandbox", "verify", "orders", "billing", "-o", "json"}) == kExitError);
    const json both = testing::printedJson(two.out.str());
    CHECK(both["apiVersion"] == "v1");
    CHECK(both["kind"] == "List");
    CHECK(both["metadata"] == json({{"resourceVersion", ""}}));
    REQUIRE(both["items"].size() == 2);
    CHECK(both["items"][0]["sandbox"] == "orders");
    CHECK(both["items"][1]["sandbox"] == "billing");
    CHECK(both["items"][1]["result"] == "error");

    TestHost all;  // --all: a List even of one
    all.serveSandboxGroup();
    all.server.onJson("GET", kSandboxes, 200, list({sandboxObject("orders", "5", "web")}));
    CHECK(all.run({"sandbox", "verify", "--all", "-o", "json"}) == kExitError);
    const json one = testing::printedJson(all.out.str());
    CHECK(one["kind"] == "List");
    REQUIRE(one["items"].size() == 1);
    CHECK(one["items"][0]["sandbox"] == "orders");

    TestHost single;  // one sandbox named: its report alone, as before
    single.serveSandboxGroup();
    CHECK(single.run({"sandbox", "verify", "orders", "-o", "json"}) == kExitError);
    CHECK(testing::printedJson(single.out.str())["sandbox"] == "orders");
}

// --- (e) no internal URL reaches the user ------------------------------------------------------

TEST_CASE("an apiserver message names what it dialed, never the node's address",
          "[output-parity][errors]") {
    const std::string body =
        json{{"kind", "Status"},
             {"code", 500},
             {"message",
              "error dialing backend: dial tcp 10.0.0.5:10250: connect: connection refused; "
              "Get \"https://10.0.0.5:10250/exec/team1/orders/agent?command=sh\": EOF"}}
            .dump();
    const std::string message = kube::apiErrorFromResponse(500, body).what();
    INFO(message);
    CHECK_FALSE(contains(message, "10.0.0.5"));
    CHECK_FALSE(contains(message, "10250"));
    CHECK_FALSE(contains(message, "://"));
    CHECK(message ==
          "error dialing backend: dial tcp: connect: connection refused; Get the node's exec "
          "endpoint: EOF");

    // A webhook's service URL, an older Go's unquoted one: what is left is host-free text.
    CHECK(kube::scrubServerMessage(
              "failed calling webhook \"v.example\": Post "
              "\"https://hook.system.svc:443/validate?timeout=10s\": dial tcp [fd00::5]:443: i/o "
              "timeout") ==
          "failed calling webhook \"v.example\": Post an internal endpoint: dial "
          "tcp: i/o timeout");
    CHECK(kube::scrubServerMessage("Get https://10.0.0.7:10250/containerLogs/a/b/c: EOF") ==
          "Get the node's container-log endpoint: EOF");
    CHECK(kube::scrubServerMessage("no URL here: a://") == "no URL here: a://");
}

TEST_CASE("Go's other network errors and certificate names lose their addresses too",
          "[output-parity][errors]") {
    using kube::scrubServerMessage;
    CHECK(scrubServerMessage("dial tcp: lookup ip-10-0-1-5.ec2.internal on 169.254.169.253:53: "
                             "no such host") == "dial tcp: lookup: no such host");
    CHECK(scrubServerMessage("read tcp 10.0.0.1:51234->10.0.0.5:10250: read: connection reset") ==
          "read tcp: read: connection reset");
    CHECK(scrubServerMessage("write tcp6 [fd00::1]:5->[fd00::5]:10250: broken pipe") ==
          "write tcp6: broken pipe");
    CHECK(scrubServerMessage("dial tcp4 10.0.0.5:10250: i/o timeout") == "dial tcp4: i/o timeout");
    CHECK(scrubServerMessage("dial unix /var/run/cri.sock: connect: no such file") ==
          "dial unix: connect: no such file");
    CHECK(scrubServerMessage("x509: certificate is valid for ip-10-0-1-5, 10.0.0.5, not api") ==
          "x509: certificate is valid for other names, not api");
    // No scheme: the address literal still goes; a lookup that names no host keeps its words.
    CHECK(scrubServerMessage("proxy to 10.0.0.5:10250/exec/a/b?command=id failed") ==
          "proxy to an internal address/exec/a/b?command=id failed");
    CHECK(scrubServerMessage("lookup failed, version 1.36 on node [fe80::1%eth0]:22") ==
          "lookup failed, version 1.36 on node an internal address");
    // A flood is cut before it is scrubbed: bounded time and size however many URLs it holds.
    std::string flood;
    while (flood.size() < 4 * 1024 * 1024) flood += "a://b ";
    const auto scrubbed = scrubServerMessage(flood);
    CHECK(scrubbed.size() < 200 * 1024);
}

TEST_CASE("exec's status message: raw C1 bytes and invalid UTF-8 become spaces",
          "[output-parity][errors][exec]") {
    CHECK(kube::boundedServerMessage("a\x9d"
                                     "0;t\x07"
                                     "b\xc2\x9b"
                                     "c\xc3\xa9\xff",
                                     100) == "a 0;t b c\xc3\xa9 ");
}

// Sandbox "orders" with its running pod "orders", ready for an exec.
void serveExecPod(TestHost& host) {
    host.serveSandboxGroup();
    json sandbox = sandboxObject("orders", "5", "web");
    sandbox["status"] = {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"}};
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox);
    json pod = {{"metadata",
                 {{"name", "orders"},
                  {"namespace", "team1"},
                  {"uid", "pod-uid-orders"},
                  {"creationTimestamp", "2023-11-14T22:00:05Z"},
                  {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
                  {"ownerReferences",
                   {{{"kind", "Sandbox"},
                     {"name", "orders"},
                     {"uid", "uid-orders"},
                     {"controller", true}}}}}},
                {"spec", {{"containers", {{{"name", "agent"}}}}}},
                {"status", {{"phase", "Running"}}}};
    host.server.onJson("GET", kPods, 200, list({pod}));
    host.server.onJson("GET", kPods + "/orders", 200, pod);
}

TEST_CASE("exec's status-channel message is bounded and names no node address",
          "[output-parity][errors][exec]") {
    TestHost host;
    serveExecPod(host);
    testing::ExecScript script;
    script.statusBody =
        json{{"status", "Failure"},
             {"reason", "InternalError"},
             {"message",
              "error sending request: Post \"https://10.0.0.5:10250/exec/team1/orders/"
              "agent?command=" +
                  std::string(5000, 'x') + "\": \x1b[2Jconnection reset" + std::string(5000, 'y')}}
            .dump();
    host.server.onExec("team1", "orders", script);
    CHECK(host.run({"sandbox", "exec", "orders", "--", "ls"}) != 0);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.size() < 400);
    CHECK_FALSE(contains(err, "10.0.0.5"));
    CHECK_FALSE(contains(err, "xxx"));
    CHECK_FALSE(contains(err, "\x1b"));
    CHECK(contains(err, "the node's exec endpoint"));
    CHECK(contains(err, "connection reset"));
    CHECK(contains(err, "..."));
}

// --- (f) gc's dry-run sentences ---------------------------------------------------------------

namespace {

// One expired Sandbox and nothing else to collect.
void serveOneExpired(TestHost& host) {
    host.serveGroups();
    json expired = sandboxObject("expired", "7", "web");
    expired["spec"]["shutdownTime"] = "2023-11-14T22:00:00Z";
    host.server.onJson("GET", kSandboxes, 200, list({expired}));
    host.server.onJson("GET", kPods, 200, list({}));
    host.server.onJson("GET", kRuntimes, 200, list({}));
    host.server.on("DELETE", kSandboxes + "/expired", 200, "{}");
}

}  // namespace

TEST_CASE("gc --dry-run says so in one whole sentence, as kubectl's (dry run)",
          "[output-parity][gc]") {
    TestHost host;
    serveOneExpired(host);
    REQUIRE(host.run({"gc", "--dry-run"}) == 0);
    CHECK(host.err.str() == "1 object would be deleted (dry run)\n");
    CHECK(host.server.writes().empty());
}

TEST_CASE("gc --dry-run=server sends each delete with dryRun [All] and says so last",
          "[output-parity][gc]") {
    TestHost host;
    serveOneExpired(host);
    REQUIRE(host.run({"gc", "--dry-run=server"}) == 0);
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kSandboxes + "/expired"});
    const auto deletes = host.server.requestsTo("DELETE", kSandboxes + "/expired");
    REQUIRE(deletes.size() == 1);
    // In the DeleteOptions body, as kubectl sends a delete's dryRun.
    CHECK(json::parse(deletes[0].body)["dryRun"] == json::array({"All"}));
    CHECK(host.err.str() == "deleted 1 of 1 object (server dry run)\n");
}

// --- (g) --allow-cidr 0.0.0.0/0 --force: warned, and the summary does not claim a boundary -----

TEST_CASE("project create --allow-cidr 0.0.0.0/0 --force warns and its summary is true",
          "[output-parity][project]") {
    TestHost host;
    serveProjectCreate(host);
    REQUIRE(host.run({"project", "create", "team1", "--allow-cidr", "0.0.0.0/0", "--force",
                      "--no-check"}) == 0);
    const std::string err = host.err.str();
    INFO(host.out.str() << err);
    CHECK(err ==
          "Warning: --allow-cidr 0.0.0.0/0 allows egress to every IPv4 address: project team1 has "
          "no IPv4 egress boundary\n");
    CHECK_FALSE(contains(host.out.str(), "everything else denied"));
    CHECK(contains(host.out.str(),
                   "  Egress allowed (networkpolicy) to every IPv4 address (no IPv4 boundary):\n"
                   "    DNS"));

    TestHost both;
    serveProjectCreate(both);
    REQUIRE(both.run({"project", "create", "team1", "--allow-cidr", "0.0.0.0/0", "--allow-cidr",
                      "::/0", "--force", "--no-check"}) == 0);
    CHECK(both.err.str() ==
          "Warning: --allow-cidr 0.0.0.0/0 and ::/0 allows egress to every address: project team1 "
          "has no egress boundary\n");
    CHECK(contains(both.out.str(), "to every address (nothing is denied):"));
    CHECK_FALSE(contains(both.out.str(), "everything else denied"));

    TestHost narrow;  // a real boundary keeps its words and no warning
    serveProjectCreate(narrow);
    REQUIRE(narrow.run(
                {"project", "create", "team1", "--allow-cidr", "10.20.0.0/16", "--no-check"}) == 0);
    CHECK(contains(narrow.out.str(), "everything else denied:"));
    CHECK_FALSE(contains(narrow.err.str(), "Warning"));
}

// --- (h) the paths the other tests leave out -----------------------------------------------------

TEST_CASE("agents list -l/--selector reaches every kind's request beside managed-by",
          "[output-parity][agents][list]") {
    TestHost host;
    host.serveSandboxGroup();
    for (const std::string& path :
         {kDeployments, std::string("/apis/apps/v1/namespaces/team1/statefulsets"),
          std::string("/apis/batch/v1/namespaces/team1/jobs"), kSandboxes, kPods})
        host.server.onJson("GET", path, 200, list({}));
    CHECK(host.run({"agents", "list", "-l", "tier=web", "-o", "json"}) == 0);
    size_t kinds = 0;
    for (const auto& request : host.server.requests) {
        if (request.url.find("/namespaces/team1/") == std::string::npos) continue;
        if (request.url.find("/pods") != std::string::npos) continue;
        ++kinds;
        INFO(request.url);
        CHECK(contains(request.url, "managed-by%3Drossoctl%2Ctier%3Dweb"));
    }
    CHECK(kinds == 4);
    TestHost longForm;
    longForm.serveSandboxGroup();
    for (const std::string& path :
         {kDeployments, std::string("/apis/apps/v1/namespaces/team1/statefulsets"),
          std::string("/apis/batch/v1/namespaces/team1/jobs"), kSandboxes, kPods})
        longForm.server.onJson("GET", path, 200, list({}));
    CHECK(longForm.run({"agents", "list", "--selector", "team=a", "-o", "name"}) == 0);
    CHECK(contains(longForm.server.requestsTo("GET", kDeployments).at(0).url, "team%3Da"));
}

TEST_CASE("sandbox list and agents list: -o jsonpath, -o custom-columns and --sort-by",
          "[output-parity][list]") {
    const std::vector<json> sandboxes = {sandboxObject("zeta", "5", "web"),
                                         sandboxObject("alpha", "6", "db")};
    auto serveSandboxes = [&](TestHost& host) {
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list(sandboxes));
        host.server.onJson("GET", kPods, 200, list({}));
    };
    auto serveAgents = [&](TestHost& host) {
        serveSandboxes(host);
        for (const std::string& path :
             {kDeployments, std::string("/apis/apps/v1/namespaces/team1/statefulsets"),
              std::string("/apis/batch/v1/namespaces/team1/jobs")})
            host.server.onJson("GET", path, 200, list({}));
    };
    for (const std::string group : {"sandbox", "agents"}) {
        auto serve = [&](TestHost& host) {
            group == "sandbox" ? serveSandboxes(host) : serveAgents(host);
        };
        INFO(group);
        TestHost path;
        serve(path);
        CHECK(path.run({group, "list", "-o", "jsonpath={.items[*].metadata.name}"}) == 0);
        // As each lists unsorted: the server's order, or agents list's namespace/name.
        CHECK(path.out.str() == (group == "sandbox" ? "zeta alpha" : "alpha zeta"));
        TestHost sorted;
        serve(sorted);
        CHECK(sorted.run({group, "list", "--sort-by=.metadata.name", "-o",
                          R"(jsonpath={range .items[*]}{.metadata.name}{"\n"}{end})"}) == 0);
        CHECK(sorted.out.str() == "alpha\nzeta\n");
        TestHost columns;
        serve(columns);
        CHECK(columns.run({group, "list", "--sort-by", "{.metadata.labels.tier}", "-o",
                           "custom-columns=NAME:.metadata.name,TIER:.metadata.labels.tier"}) == 0);
        CHECK(columns.out.str() == "NAME    TIER\nalpha   db\nzeta    web\n");
        TestHost table;  // --sort-by orders the table too
        serve(table);
        CHECK(table.run({group, "list", "--sort-by", ".metadata.name", "--no-headers"}) == 0);
        CHECK(table.out.str().find("alpha") < table.out.str().find("zeta"));
    }
}

TEST_CASE("agents import --dry-run=server sends every create with dryRun=All",
          "[output-parity][agents]") {
    TestHost host;
    serveImport(host);
    REQUIRE(host.run(importWith({"--port", "8080", "--dry-run=server"})) == 0);
    const std::vector<std::string> creates = {"POST " + kDeployments, "POST " + kServices,
                                              "POST " + kRuntimes};
    CHECK(host.server.writes() == creates);
    for (const auto& request : host.server.requests)
        if (request.method != "GET") {
            INFO(request.url);
            CHECK(contains(request.url, "dryRun=All"));
        }
    CHECK(host.out.str() ==
          "deployment.apps/orders created (server dry run)\n"
          "service/orders created (server dry run)\n"
          "agentruntime.agent.rossoctl.dev/orders created (server dry run)\n");
    CHECK_FALSE(contains(host.err.str(), "Next:"));
}

TEST_CASE("project create --dry-run=server: every apply carries dryRun=All, nothing waits",
          "[output-parity][project]") {
    TestHost host;
    // The project exists (so the server checks every object), and is rossoctl's.
    host.server.onJson("GET", kTeam1, 200, projectNamespace("team1", "7"));
    for (const std::string& path : {kTeam1, kTeam1 + "/resourcequotas/sandbox-quota",
                                    kTeam1 + "/limitranges/sandbox-limits", kPolicies + "/*"})
        host.server.onJson("PATCH", path, 200, written("Object", "x"));
    host.server.onJson("GET", "*", 200, list({}));
    REQUIRE(host.run({"project", "create", "team1", "--dry-run=server"}) == 0);
    INFO(host.out.str() << host.err.str());
    const auto writes = host.server.writes();
    CHECK(writes.size() >= 4);  // namespace, quota, limits, policies
    for (const auto& request : host.server.requests)
        if (request.method != "GET") {
            INFO(request.url);
            CHECK(request.method == "PATCH");
            CHECK(contains(request.url, "dryRun=All"));
        }
    CHECK(contains(host.out.str(), "Dry run (server): nothing was written."));
    CHECK(host.server.execs.empty());  // no enforcement check on a dry run
    for (const auto& request : host.server.requests)
        CHECK_FALSE(contains(request.url, "watch=true"));
}

TEST_CASE("exec's exit code is a number 0-255 or no exit code at all", "[output-parity][exec]") {
    for (const std::string code : {"-1", "12abc", "99999", ""}) {
        TestHost host;
        serveExecPod(host);
        testing::ExecScript script;
        script.statusBody =
            json{{"status", "Failure"},
                 {"reason", "NonZeroExitCode"},
                 {"message", "command terminated with non-zero exit code"},
                 {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", code}}}}}}}
                .dump();
        host.server.onExec("team1", "orders", script);
        INFO("code " << code);
        // Not passed through as the command's status: rossoctl's own "could not run" (126).
        CHECK(host.run({"sandbox", "exec", "orders", "--", "ls"}) == 126);
        CHECK(contains(host.err.str(), "non-zero exit code"));
    }
    TestHost real;
    serveExecPod(real);
    testing::ExecScript script;
    script.statusBody =
        json{{"status", "Failure"},
             {"reason", "NonZeroExitCode"},
             {"message", "command terminated with non-zero exit code"},
             {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", "7"}}}}}}}
            .dump();
    real.server.onExec("team1", "orders", script);
    CHECK(real.run({"sandbox", "exec", "orders", "--", "ls"}) == 7);
}
