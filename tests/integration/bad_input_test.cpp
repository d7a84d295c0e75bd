// Bad input, table-driven: every case exits with the documented code, prints exactly one
// line on stderr (never an uncaught exception), and changes nothing on the cluster.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>

#include "fault_server.hpp"
#include "harness.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/kube/resource.hpp"

namespace {

// Where a case sends its requests: the real apiserver, or a front that misbehaves.
enum class Server { Cluster, Html, Close, HalfBody, HangWatch, Slow };

struct BadInput {
    const char* what;
    std::vector<std::string> args;  // {ns}, {long}, {junk}, {dir}, {missing}, {env} are filled in
    int exitCode;
    const char* mentions;  // a part of the one stderr line
    Server server = Server::Cluster;
};

const std::string kLongName(254, 'a');

// clang-format off
const std::vector<BadInput> kCases = {
    // Flags and arguments the parser rejects.
    {"unknown global flag", {"--frobnicate", "version"}, 2, "frobnicate"},
    {"unknown command flag", {"version", "--bogus"}, 2, "bogus"},
    {"unknown subcommand", {"sandbox", "explode"}, 2, "unknown command \"explode\" for \"rossoctl sandbox\""},
    {"missing subcommand", {"agents"}, 2, "needs a command"},
    {"mistyped subcommand", {"sandbox", "lsit"}, 2, "did you mean \"list\""},
    {"mistyped group", {"sandbx", "list"}, 2, "unknown command \"sandbx\" for \"rossoctl\""},
    {"mistyped flag", {"sandbox", "list", "--namespcae", "x"}, 2, "unknown flag: --namespcae"},
    {"pool: negative --size", {"sandbox", "pool", "--size", "-1", "-n", "{ns}"}, 2, "0 to 100"},
    {"pool: --size abc", {"sandbox", "pool", "--size", "abc", "-n", "{ns}"}, 2, "invalid argument \"abc\" for \"--size\""},
    {"set-env: nothing given", {"sandbox", "set-env", "-n", "{ns}"}, 2, "SANDBOX is required"},
    {"non-numeric -v", {"-v", "loud", "version"}, 2, "loud"},
    {"bad --request-timeout", {"--request-timeout", "forever", "version"}, 2, "forever"},
    {"bad -o", {"version", "-o", "xml"}, 2, "xml"},
    // agents
    {"import: missing --name", {"agents", "import", "from-image", "--containerImage", "busybox", "-n", "{ns}"}, 2, "--name"},
    {"import: missing --containerImage", {"agents", "import", "from-image", "--name", "orders2", "-n", "{ns}"}, 2, "containerImage"},
    {"import: uppercase name", {"agents", "import", "from-image", "--name", "Orders", "--containerImage", "busybox", "-n", "{ns}"}, 2, "Orders"},
    {"import: 254-character name", {"agents", "import", "from-image", "--name", "{long}", "--containerImage", "busybox", "-n", "{ns}"}, 2, "aaaa"},
    {"import: unicode name", {"agents", "import", "from-image", "--name", "ordérs", "--containerImage", "busybox", "-n", "{ns}"}, 2, "ord"},
    {"import: empty name", {"agents", "import", "from-image", "--name", "", "--containerImage", "busybox", "-n", "{ns}"}, 2, "name"},
    {"import: empty image", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "", "-n", "{ns}"}, 2, "containerImage"},
    {"import: env without =", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--envVar", "JUSTKEY", "-n", "{ns}"}, 2, "JUSTKEY"},
    {"import: env with empty key", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--envVar", "=value", "-n", "{ns}"}, 2, "must not be empty"},
    {"import: duplicated env key", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--envVar", "A=1", "--envVar", "A=2", "-n", "{ns}"}, 2, "given twice"},
    {"import: unreadable --envVarsFile", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--envVarsFile", "{missing}", "-n", "{ns}"}, 2, "{missing}"},
    {"import: --envVarsFile is a directory", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--envVarsFile", "{dir}", "-n", "{ns}"}, 2, "{dir}"},
    {"import: binary --envVarsFile", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--envVarsFile", "{junk}", "-n", "{ns}"}, 2, "{junk}"},
    {"import: bad --cpu", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--cpu", "lots", "-n", "{ns}"}, 2, "lots"},
    {"import: negative --memory", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--memory", "-1Gi", "-n", "{ns}"}, 2, "-1Gi"},
    {"import: bad --lifetime", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--lifetime", "forever", "-n", "{ns}"}, 2, "forever"},
    {"import: port out of range", {"agents", "import", "from-image", "--name", "orders2", "--containerImage", "busybox", "--port", "70000", "-n", "{ns}"}, 2, "70000"},
    {"import: unknown deployment type", {"agents", "import", "--deployment-type", "pod", "from-image", "--name", "orders2", "--containerImage", "busybox", "-n", "{ns}"}, 2, "pod"},
    {"get: missing name", {"agents", "get", "-n", "{ns}"}, 2, "name"},
    {"get: invalid name", {"agents", "get", "Bad_Name", "-n", "{ns}"}, 2, "Bad_Name"},
    {"delete: empty name", {"agents", "delete", "", "-n", "{ns}"}, 2, "name"},
    {"wait: bad --timeout", {"agents", "wait", "orders", "--timeout", "soon", "-n", "{ns}"}, 2, "soon"},
    {"list: unknown flag", {"agents", "list", "--sort", "-n", "{ns}"}, 2, "sort"},
    {"get: nonexistent namespace", {"agents", "get", "orders", "-n", "{ns}-nowhere"}, 1, "not found"},
    {"wait: nonexistent agent", {"agents", "wait", "absent", "--timeout", "2s", "-n", "{ns}"}, 1, "absent"},
    // sandbox
    {"get: name with a space", {"sandbox", "get", "a b", "-n", "{ns}"}, 2, "a b"},
    {"get: nonexistent sandbox", {"sandbox", "get", "absent", "-n", "{ns}"}, 1, "absent"},
    {"list: invalid namespace", {"sandbox", "list", "-n", "bad_namespace"}, 2, "bad_namespace"},
    {"set-env: no change given", {"sandbox", "set-env", "orders", "-n", "{ns}"}, 2, "NAME=VALUE"},
    {"set-env: invalid variable name", {"sandbox", "set-env", "orders", "1ABC=x", "-n", "{ns}"}, 2, "1ABC"},
    {"set-env: duplicated key", {"sandbox", "set-env", "orders", "A=1", "A=2", "-n", "{ns}"}, 2, "given twice"},
    {"set-env: set and remove one key", {"sandbox", "set-env", "orders", "A=1", "A-", "-n", "{ns}"}, 2, "A"},
    {"set-env: 254-character sandbox", {"sandbox", "set-env", "{long}", "A=1", "-n", "{ns}"}, 2, "254 characters"},
    {"set-env: unreadable --from-env-file", {"sandbox", "set-env", "orders", "--from-env-file", "{missing}", "-n", "{ns}"}, 2, "{missing}"},
    {"set-env: binary --from-env-file", {"sandbox", "set-env", "orders", "--from-env-file", "{junk}", "-n", "{ns}"}, 2, "{junk}"},
    {"set-env: = in value is kept, unknown sandbox", {"sandbox", "set-env", "absent", "URL=http://x/?a=b", "-n", "{ns}"}, 1, "absent"},
    {"set-env: unknown container", {"sandbox", "set-env", "orders", "A=1", "-c", "nope", "-n", "{ns}"}, 1, "nope"},
    {"restart: no sandbox named", {"sandbox", "restart", "-n", "{ns}"}, 2, "sandbox"},
    {"restart: bad --timeout", {"sandbox", "restart", "orders", "--timeout", "-5s", "-n", "{ns}"}, 2, "-5s"},
    {"restart: nonexistent sandbox", {"sandbox", "restart", "absent", "-n", "{ns}"}, 1, "absent"},
    {"exec: no command", {"sandbox", "exec", "orders", "-n", "{ns}"}, 2, "command"},
    {"exec: nonexistent sandbox", {"sandbox", "exec", "absent", "-n", "{ns}", "--", "true"}, 1, "absent"},
    {"verify: bad --egress-target", {"sandbox", "verify", "orders", "--egress-target", "not a url", "-n", "{ns}"}, 2, "not a url"},
    {"verify: bad -o", {"sandbox", "verify", "orders", "-o", "xml", "-n", "{ns}"}, 2, "xml"},
    {"verify: nonexistent sandbox", {"sandbox", "verify", "absent", "--no-restart", "-n", "{ns}"}, 1, "absent"},
    {"run: no command (125: run's own failure)", {"sandbox", "run", "-n", "{ns}"}, 125, "command after --"},
    {"run: unreadable --file", {"sandbox", "run", "--file", "{missing}", "-n", "{ns}", "--", "true"}, 125, "{missing}"},
    {"run: bad --timeout", {"sandbox", "run", "--timeout", "0x", "-n", "{ns}", "--", "true"}, 125, "0x"},
    {"run: bad --image", {"sandbox", "run", "--image", "UPPER CASE", "-n", "{ns}", "--", "true"}, 125, "UPPER CASE"},
    // project
    {"create: invalid name", {"project", "create", "Team_1"}, 2, "Team_1"},
    {"create: 254-character name", {"project", "create", "{long}"}, 2, "aaaa"},
    {"create: unicode name", {"project", "create", "tëam"}, 2, "t"},
    {"create: bad --cpu", {"project", "create", "{ns}-p", "--cpu", "four"}, 2, "four"},
    {"create: bad --allow-host", {"project", "create", "{ns}-p", "--allow-host", "exa mple.com"}, 2, "exa mple.com"},
    {"create: bad --allow-cidr", {"project", "create", "{ns}-p", "--allow-cidr", "300.1.1.1/40"}, 2, "300.1.1.1/40"},
    {"create: bad --pod-security", {"project", "create", "{ns}-p", "--pod-security", "none"}, 2, "none"},
    {"create: bad --egress", {"project", "create", "{ns}-p", "--egress", "magic"}, 2, "magic"},
    {"create: bad --default-lifetime", {"project", "create", "{ns}-p", "--default-lifetime", "1y"}, 2, "1y"},
    {"delete: missing name", {"project", "delete"}, 2, "name"},
    {"describe: nonexistent project", {"project", "describe", "{ns}-nowhere"}, 1, "{ns}-nowhere"},
    // configuration
    {"unreadable --kubeconfig", {"--kubeconfig", "{missing}", "version"}, 1, "{missing}"},
    {"--kubeconfig is a directory", {"--kubeconfig", "{dir}", "version"}, 1, "{dir}"},
    {"binary junk --kubeconfig", {"--kubeconfig", "{junk}", "version"}, 1, "{junk}"},
    {"nonexistent --context", {"--context", "nowhere", "version"}, 2, "nowhere"},
    {"unreachable --server", {"-s", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--token", "x", "version"}, 1, "127.0.0.1:1"},
    // servers that misbehave
    {"server answers HTML: version", {"version"}, 1, "", Server::Html},
    {"server answers HTML: sandbox list", {"sandbox", "list", "-n", "{ns}"}, 1, "", Server::Html},
    {"server closes mid-headers: sandbox get", {"sandbox", "get", "orders", "-n", "{ns}"}, 1, "", Server::Close},
    {"server closes mid-body: project describe", {"project", "describe", "{ns}"}, 1, "", Server::HalfBody},
    {"watch never ends: agents wait --timeout", {"agents", "wait", "paused", "--timeout", "3s", "-n", "{ns}"}, 1, "timed out", Server::HangWatch},
    {"watch never ends: --request-timeout", {"--request-timeout", "2s", "agents", "wait", "paused", "--timeout", "20s", "-n", "{ns}"}, 1, "", Server::HangWatch},
    {"slow server: --request-timeout", {"--request-timeout", "1s", "sandbox", "list", "-n", "{ns}"}, 1, "", Server::Slow},
};
// clang-format on

std::string fill(std::string text, const std::map<std::string, std::string>& values) {
    for (const auto& [key, value] : values)
        for (size_t at; (at = text.find(key)) != std::string::npos;)
            text.replace(at, key.size(), value);
    return text;
}

std::vector<std::string> rulesFor(Server server) {
    switch (server) {
        case Server::Html:
            return {"* . html"};
        case Server::Close:
            return {"GET /apis/agents.x-k8s.io/.*/sandboxes close"};
        case Server::HalfBody:
            return {"GET /api/v1/namespaces/ half"};
        case Server::HangWatch:
            return {"GET watch=(true|1) hang"};
        case Server::Slow:
            return {"GET /apis/agents.x-k8s.io/ delay:6"};
        case Server::Cluster:
            break;
    }
    return {};
}

}  // namespace

TEST_CASE("bad input: one line on stderr, the documented exit code, nothing changed",
          "[bad-input]") {
    harness::TestNamespace ns("badinput", true,
                              {{"pod-security.kubernetes.io/enforce", "restricted"}});
    // A real agent to aim at, so "orders" cases fail on their input, not on its absence.
    auto seed =
        harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                           "--name", "orders", "--containerImage", "busybox", "-n", ns.name()});
    INFO(seed.err);
    REQUIRE(seed.exitCode == 0);
    // And one whose pod can never be scheduled (a node selector no node has), never Ready, so
    // waiting on it means watching (a suspended one is refused at once, without a watch).
    REQUIRE(harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                               "--name", "paused", "--containerImage", "busybox", "-n", ns.name()})
                .exitCode == 0);
    rossoctl::SystemClock clock;
    const auto sandboxes = rossoctl::kube::Discovery(harness::admin(), clock, "").sandboxes();
    // A merge patch: the controller writes the sandbox too, so a read-modify-PUT could 409.
    harness::admin().patch(
        sandboxes, ns.name(), "paused", rossoctl::kube::PatchType::Merge,
        R"({"spec":{"podTemplate":{"spec":{"nodeSelector":{"rossoctl.test/no-such-node":"x"}}}}})");
    // The controller recreates a deleted pod from the template: that one stays Pending. (Its
    // first pod may not exist yet on a busy node: wait for it, or the removal finds nothing.)
    REQUIRE(harness::eventually([&] {
        return harness::admin()
            .getIfExists(rossoctl::kube::resources::pods(), ns.name(), "paused")
            .has_value();
    }));
    harness::admin().remove(rossoctl::kube::resources::pods(), ns.name(), "paused", {});
    REQUIRE(harness::rossoctl({"agents", "wait", "orders", "--timeout", "2m", "-n", ns.name()})
                .exitCode == 0);
    // Let the controllers settle before the snapshot.
    harness::eventually([&] {
        auto pod =
            harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns.name(), "paused");
        return pod && (*pod)["spec"].contains("nodeSelector");
    });
    const auto before = harness::settledSnapshot(ns.name());

    const std::string junk = harness::writeTempFile(
        "junk", std::string("\x7f"
                            "ELF\x02\x01\x01\0\0\0\xff\xfe\x00\x01\xc3\x28\n\x1b[31m",
                            22));
    const std::map<std::string, std::string> values = {
        {"{ns}", ns.name()},
        {"{long}", kLongName},
        {"{junk}", junk},
        {"{dir}", "/tmp"},
        {"{missing}", "/nonexistent/rossoctl-input"}};
    std::map<Server, std::unique_ptr<harness::FaultApiserver>> servers;

    size_t failures = 0;
    for (const auto& c : kCases) {
        std::vector<std::string> args;
        if (c.server != Server::Cluster) {
            auto& server = servers[c.server];
            if (!server) server = std::make_unique<harness::FaultApiserver>(rulesFor(c.server));
            args = {"--kubeconfig", server->kubeconfig()};
        }
        for (const auto& arg : c.args) args.push_back(fill(arg, values));
        auto result = harness::rossoctl(args, {}, {}, 30);
        const std::string mentions = fill(c.mentions, values);
        const bool oneLine = std::count(result.err.begin(), result.err.end(), '\n') == 1 &&
                             result.err.back() == '\n';
        const bool noCrash = result.err.find("terminate called") == std::string::npos &&
                             result.err.find("what():") == std::string::npos;
        const bool ok = result.exitCode == c.exitCode && oneLine && noCrash &&
                        result.err.find(mentions) != std::string::npos;
        if (!ok) ++failures;
        INFO(c.what << ": exit " << result.exitCode << " (want " << c.exitCode
                    << ")\n  stderr: " << result.err << "  stdout: " << result.out.substr(0, 200));
        CHECK(ok);
        std::printf("%-46s exit %d  %s", c.what, result.exitCode,
                    result.err.substr(0, result.err.find('\n')).substr(0, 110).c_str());
        std::printf("%s\n", ok ? "" : "   <-- FAIL");
    }
    std::printf("%zu cases, %zu failed\n", kCases.size(), failures);
    CHECK(harness::snapshot(ns.name()) == before);
    CHECK_FALSE(harness::admin().getIfExists(rossoctl::kube::resources::namespaces(), "",
                                             ns.name() + "-p"));
}
