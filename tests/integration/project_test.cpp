// project create/delete/describe/list against the local cluster.
#include "rossoctl/model/project.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "harness.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/ui/yaml.hpp"

using nlohmann::json;
using namespace rossoctl;
namespace resources = kube::resources;

namespace {

// A restricted-compliant pod with no resources: the LimitRange has to fill them in.
json plainPod(const std::string& name, const std::string& ns) {
    json securityContext = {{"allowPrivilegeEscalation", false},
                            {"runAsNonRoot", true},
                            {"runAsUser", 65532},
                            {"capabilities", {{"drop", json::array({"ALL"})}}},
                            {"seccompProfile", {{"type", "RuntimeDefault"}}}};
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec",
             {{"automountServiceAccountToken", false},
              {"containers", json::array({{{"name", "main"},
                                           {"image", "curlimages/curl:8"},
                                           {"command", json::array({"sleep", "3600"})},
                                           {"securityContext", securityContext}}})}}}};
}

int apiStatus(const std::function<void()>& request, std::string* message = nullptr) {
    try {
        request();
        return 0;
    } catch (const kube::ApiError& error) {
        if (message) *message = error.statusMessage();
        return static_cast<int>(error.code());
    }
}

// Reads back each object the plan names and checks what rossoctl asked for is there as is.
void requireObjectsAsPlanned(const std::string& ns, const std::vector<std::string>& hosts,
                             const std::vector<std::string>& cidrs = {}) {
    model::ProjectOptions options;
    options.name = ns;
    options.allowCidrs = cidrs;
    for (const auto& host : hosts) options.allowHosts.push_back(model::parseAllowedHost(host));
    model::validateProjectOptions(options);
    model::SystemHostResolver resolver;
    auto plan = model::planProject(options, model::EgressMechanism::NetworkPolicy, resolver);
    for (const auto& planned : plan.objects) {
        INFO(planned.displayName());
        const auto& metadata = planned.object["metadata"];
        auto live = harness::admin().get(planned.ref, metadata.value("namespace", ""),
                                         metadata["name"].get<std::string>());
        for (const auto& [key, value] : metadata["labels"].items())
            CHECK(live["metadata"]["labels"][key] == value);
        if (metadata.contains("annotations"))
            for (const auto& [key, value] : metadata["annotations"].items())
                CHECK(live["metadata"]["annotations"][key] == value);
        if (planned.object.contains("spec")) CHECK(live["spec"] == planned.object["spec"]);
    }
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("project create writes every object as specified and converges", "[project]") {
    harness::TestNamespace project("proj", /*create=*/false);
    const auto& ns = project.name();
    // --no-check: the live check's pods change the quota's usage, and this test compares
    // snapshots of the objects (the check has tests of its own).
    auto created =
        harness::rossoctl({"project", "create", ns, "--allow-cidr", "192.0.2.0/24", "--no-check"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    CHECK(created.out.find("namespace/" + ns + " created") != std::string::npos);
    CHECK(created.out.find("Next: rossoctl agents import --deployment-type sandbox") !=
          std::string::npos);
    requireObjectsAsPlanned(ns, {}, {"192.0.2.0/24"});
    auto cidrs = harness::admin().get(resources::networkPolicies(), ns, "allow-cidrs");
    CHECK(cidrs["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"] == "192.0.2.0/24");

    SECTION("running it again changes nothing") {
        auto before = harness::settledSnapshot(ns);  // after the quota controller's status write
        auto again = harness::rossoctl(
            {"project", "create", ns, "--allow-cidr", "192.0.2.0/24", "--no-check"});
        REQUIRE(again.exitCode == 0);
        CHECK(harness::snapshot(ns) == before);
        CHECK(again.out.find("created") == std::string::npos);
        CHECK(again.out.find("networkpolicy/default-deny unchanged") != std::string::npos);
    }
    SECTION("running it with fewer rules removes the ones no longer wanted") {
        auto fewer = harness::rossoctl({"project", "create", ns, "--no-dns"});
        INFO(fewer.out << fewer.err);
        REQUIRE(fewer.exitCode == 0);
        CHECK_FALSE(harness::admin().getIfExists(resources::networkPolicies(), ns, "allow-dns"));
        CHECK_FALSE(harness::admin().getIfExists(resources::networkPolicies(), ns, "allow-cidrs"));
        CHECK(harness::admin().getIfExists(resources::networkPolicies(), ns, "default-deny"));
    }
    SECTION("admission: restricted, LimitRange defaults, quota") {
        std::string message;
        json privileged = plainPod("root", ns);
        privileged["spec"]["containers"][0]["securityContext"] = {{"privileged", true}};
        CHECK(apiStatus([&] { harness::admin().create(resources::pods(), ns, privileged); },
                        &message) == 403);
        CHECK(message.find("PodSecurity") != std::string::npos);

        auto pod = harness::admin().create(resources::pods(), ns, plainPod("plain", ns));
        const auto& resourcesOf = pod["spec"]["containers"][0]["resources"];
        CHECK(resourcesOf["limits"]["cpu"] == "500m");
        CHECK(resourcesOf["limits"]["memory"] == "512Mi");
        CHECK(resourcesOf["requests"]["memory"] == "512Mi");

        json big = plainPod("big", ns);
        big["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "3"}, {"memory", "1Gi"}}}};
        CHECK(apiStatus([&] { harness::admin().create(resources::pods(), ns, big); }, &message) ==
              403);
        CHECK(message.find("maximum cpu") != std::string::npos);

        // Seven more 500m pods fit the 4-cpu quota; the ninth does not.
        for (int i = 0; i < 7; ++i)
            harness::admin().create(resources::pods(), ns, plainPod("p" + std::to_string(i), ns));
        CHECK(
            apiStatus([&] { harness::admin().create(resources::pods(), ns, plainPod("over", ns)); },
                      &message) == 403);
        CHECK(message.find("exceeded quota") != std::string::npos);
    }
    SECTION("describe and list show it") {
        auto described = harness::rossoctl({"project", "describe", ns});
        INFO(described.out << described.err);
        REQUIRE(described.exitCode == 0);
        CHECK(described.out.find("enforce=restricted") != std::string::npos);
        CHECK(described.out.find("limits.cpu") != std::string::npos);
        CHECK(described.out.find("denies all egress") != std::string::npos);
        CHECK(described.out.find("192.0.2.0/24") != std::string::npos);
        auto listed = harness::rossoctl({"project", "list", "-o", "name"});
        CHECK(listed.out.find("namespace/" + ns + "\n") != std::string::npos);
    }
    SECTION("delete asks for --yes without a terminal, then leaves nothing") {
        auto refused = harness::rossoctl({"project", "delete", ns});
        CHECK(refused.exitCode == 2);
        CHECK(refused.err.find("--yes") != std::string::npos);
        auto deleted = harness::rossoctl({"project", "delete", ns, "--yes"});
        INFO(deleted.out << deleted.err);
        REQUIRE(deleted.exitCode == 0);
        CHECK(deleted.out.find("is gone") != std::string::npos);
        CHECK_FALSE(harness::admin().getIfExists(resources::namespaces(), "", ns));
    }
}

TEST_CASE("project create: bad input exits 2 and writes nothing", "[project]") {
    harness::TestNamespace project("proj-bad", /*create=*/false);
    for (std::vector<std::string> flags : {std::vector<std::string>{"--cpu", "lots"},
                                           {"--allow-cidr", "10.0.0.1/8"},
                                           {"--allow-host", "pypi.org:99999"},
                                           {"--pod-security", "loose"},
                                           {"--egress", "calico"},
                                           {"--default-lifetime", "forever"}}) {
        std::vector<std::string> args{"project", "create", project.name()};
        args.insert(args.end(), flags.begin(), flags.end());
        auto result = harness::rossoctl(args);
        INFO(flags[0] << ": " << result.err);
        CHECK(result.exitCode == 2);
    }
    CHECK(harness::rossoctl({"project", "create", "Bad_Name"}).exitCode == 2);
    CHECK_FALSE(harness::admin().getIfExists(resources::namespaces(), "", project.name()));
}

TEST_CASE("project create --dry-run prints everything and writes nothing", "[project]") {
    harness::TestNamespace project("proj-dry", /*create=*/false);
    auto client = harness::rossoctl({"project", "create", project.name(), "--dry-run=client", "-o",
                                     "yaml", "--allow-cidr", "2001:db8::/32"});
    INFO(client.err);
    REQUIRE(client.exitCode == 0);
    for (const char* kind : {"kind: Namespace", "kind: ResourceQuota", "kind: LimitRange",
                             "name: default-deny", "name: allow-dns", "2001:db8::/32"})
        CHECK(client.out.find(kind) != std::string::npos);
    auto server = harness::rossoctl({"project", "create", project.name(), "--dry-run=server"});
    INFO(server.out << server.err);
    CHECK(server.exitCode == 0);
    CHECK(server.err.find("does not exist yet") != std::string::npos);
    CHECK_FALSE(harness::admin().getIfExists(resources::namespaces(), "", project.name()));
}

TEST_CASE("project create as a user who may not create namespaces", "[project]") {
    harness::TestNamespace project("proj-limited", /*create=*/false);
    auto result = harness::rossoctl({"project", "create", project.name()}, {},
                                    {{"KUBECONFIG", harness::limitedKubeconfigPath()}});
    INFO(result.err);
    CHECK(result.exitCode == 1);
    CHECK(result.err.find("Forbidden") != std::string::npos);
    CHECK(result.err.find("missing permission") != std::string::npos);
    CHECK(result.err.find("namespaces") != std::string::npos);
    CHECK(result.err.find("Written before this: nothing") != std::string::npos);
    CHECK_FALSE(harness::admin().getIfExists(resources::namespaces(), "", project.name()));
}

TEST_CASE("project create and delete refuse a namespace rossoctl did not make", "[project]") {
    harness::TestNamespace foreign("proj-foreign");
    auto create = harness::rossoctl({"project", "create", foreign.name()});
    CHECK(create.exitCode == 1);
    CHECK(create.err.find("--adopt") != std::string::npos);
    auto remove = harness::rossoctl({"project", "delete", foreign.name(), "--yes"});
    CHECK(remove.exitCode == 1);
    CHECK(remove.err.find("--force") != std::string::npos);
    CHECK(harness::admin().getIfExists(resources::namespaces(), "", foreign.name()));
}

namespace {

// Cilium's own Go module, fetched from the module proxy like the local cluster's modules; its
// CRDs are in the module's tree.
std::string ciliumModuleDir() {
    for (const char* go : {"go", "/usr/local/go/bin/go"}) {
        auto result =
            harness::run({go, "mod", "download", "-json", "github.com/cilium/cilium@v1.15.19"});
        if (result.exitCode != 0) continue;
        return json::parse(result.out).value("Dir", "");
    }
    return "";
}

}  // namespace

// The generated EgressFirewall and CiliumNetworkPolicy against their upstream CRD schemas,
// installed under a test group so discovery of the real groups stays untouched.
TEST_CASE("EgressFirewall and CiliumNetworkPolicy pass their upstream schemas", "[project]") {
    struct Schema {
        std::string path;
        std::string group;
        std::string plural;
        std::string version;
    };
    std::vector<Schema> schemas = {
        {std::string(harness::sourceDir())
             .append("/tests/integration/testdata/egressfirewalls.crd.yaml"),
         "k8s.ovn.org", "egressfirewalls", "v1"},
        {ciliumModuleDir().append("/pkg/k8s/apis/cilium.io/client/crds/v2/"
                                  "ciliumnetworkpolicies.yaml"),
         "cilium.io", "ciliumnetworkpolicies", "v2"}};
    harness::TestNamespace ns("proj-schema");
    model::ProjectOptions options;
    options.name = ns.name();
    options.allowHosts = {model::parseAllowedHost("pypi.org:443"),
                          model::parseAllowedHost("example.com")};
    options.allowCidrs = {model::parseCidr("192.0.2.0/24"), model::parseCidr("2001:db8::/32")};
    model::validateProjectOptions(options);
    model::SystemHostResolver resolver;
    auto firewall = model::planProject(options, model::EgressMechanism::EgressFirewall, resolver);
    auto cilium = model::planProject(options, model::EgressMechanism::Cilium, resolver);
    for (const auto& schema : schemas) {
        std::string text = readFile(schema.path);
        INFO("CRD " << schema.path);
        REQUIRE_FALSE(text.empty());
        json crd = ui::yamlToJson(text, schema.path);
        std::string testGroup = schema.group + ".schema.rossoctl.test";
        crd["metadata"] = {{"name", schema.plural + "." + testGroup}};
        crd["spec"]["group"] = testGroup;
        auto crdRef = resources::customResourceDefinitions();
        harness::admin().apply(crdRef, "", crd, {.force = true});
        REQUIRE(harness::eventually([&] {
            auto live = harness::admin().get(crdRef, "", crd["metadata"]["name"]);
            for (const auto& condition : live["status"]["conditions"])
                if (condition["type"] == "Established" && condition["status"] == "True")
                    return true;
            return false;
        }));
        const auto& plan = schema.group == "cilium.io" ? cilium : firewall;
        for (const auto& planned : plan.objects) {
            if (planned.ref.group != schema.group) continue;
            kube::ResourceRef ref = planned.ref;
            ref.group = testGroup;
            json object = planned.object;
            object["apiVersion"] = testGroup + "/" + schema.version;
            INFO(object.dump(2));
            std::string message;
            CHECK(apiStatus(
                      [&] {
                          auto admitted = harness::admin().apply(ref, ns.name(), object,
                                                                 {.dryRun = true, .force = true});
                          CHECK(admitted["spec"] == object["spec"]);  // nothing pruned as unknown
                      },
                      &message) == 0);
            CHECK(message == "");
        }
        harness::admin().remove(crdRef, "", crd["metadata"]["name"]);
    }
}

// Needs the local node: policies are enforced by its nftables rules.
TEST_CASE("project egress: outside denied, DNS works, an allowed host is reachable",
          "[project][egress]") {
    harness::TestNamespace project("proj-egress", /*create=*/false);
    const auto& ns = project.name();
    std::string byName = harness::outsideUrl();
    std::string byAddress = harness::outsideUrl(true);
    REQUIRE_FALSE(byName.empty());
    REQUIRE(harness::rossoctl({"project", "create", ns}).exitCode == 0);
    harness::admin().create(resources::pods(), ns, plainPod("probe", ns));
    REQUIRE(harness::eventually(
        [&] {
            auto pod = harness::admin().get(resources::pods(), ns, "probe");
            return pod["status"].value("phase", "") == "Running";
        },
        120));
    auto inPod = [&](std::vector<std::string> command) {
        std::vector<std::string> argv{harness::kubectlPath(), "exec", "-n", ns, "probe", "--"};
        argv.insert(argv.end(), command.begin(), command.end());
        return harness::run(argv, {}, {{"KUBECONFIG", harness::kubeconfigPath()}}, 60);
    };
    auto fetch = [&](const std::string& url) {
        return inPod({"curl", "-sS", "-o", "/dev/null", "-m", "5", url});
    };
    auto dns = inPod({"getent", "hosts", "outside.rossoctl.test"});
    INFO(dns.out << dns.err);
    CHECK(dns.exitCode == 0);
    CHECK(fetch(byAddress).exitCode != 0);
    CHECK(fetch(byName).exitCode != 0);

    auto allowed =
        harness::rossoctl({"project", "create", ns, "--allow-host", "outside.rossoctl.test:80"});
    INFO(allowed.out << allowed.err);
    REQUIRE(allowed.exitCode == 0);
    CHECK(allowed.err.find("pinned") != std::string::npos);
    requireObjectsAsPlanned(ns, {"outside.rossoctl.test:80"});
    CHECK(harness::eventually([&] { return fetch(byName).exitCode == 0; }, 30));
    auto otherPort =
        inPod({"curl", "-sS", "-o", "/dev/null", "-m", "5", "http://outside.rossoctl.test:8080/"});
    CHECK(otherPort.exitCode != 0);
}
