// valgrind's memcheck over the real binary against the real cluster: version, set-env and
// verify leak nothing and touch no invalid memory.
#include <catch2/catch.hpp>

#include "harness.hpp"

namespace {

// rossoctl ARGS under memcheck; exit 99 means memcheck found an error or a leak.
harness::RunResult underMemcheck(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"valgrind",
                                  "--quiet",
                                  "--leak-check=full",
                                  "--show-leak-kinds=definite,indirect,possible",
                                  "--errors-for-leak-kinds=definite,indirect,possible",
                                  "--error-exitcode=99",
                                  std::string("--suppressions=") + harness::sourceDir() +
                                      "/tests/integration/testdata/valgrind.supp",
                                  harness::rossoctlBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return harness::run(argv, {}, {{"KUBECONFIG", harness::kubeconfigPath()}}, 600);
}

}  // namespace

TEST_CASE("memcheck: version, set-env and verify leak nothing", "[valgrind]") {
    if (harness::sanitizedBuild()) {
        WARN("a sanitizer build cannot run under valgrind; memcheck runs in the plain build");
        return;
    }
    if (harness::run({"valgrind", "--version"}).exitCode != 0) {
        WARN("valgrind is not installed (scripts/bootstrap installs it); skipped");
        return;
    }
    harness::TestNamespace ns("memcheck", false);
    REQUIRE(harness::rossoctl({"project", "create", ns.name()}).exitCode == 0);
    REQUIRE(harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                               "--name", "orders", "--containerImage", "curlimages/curl:8", "-n",
                               ns.name()})
                .exitCode == 0);
    REQUIRE(
        harness::rossoctl({"agents", "wait", "orders", "-n", ns.name()}, {}, {}, 240).exitCode ==
        0);

    const std::vector<std::pair<std::vector<std::string>, int>> commands = {
        {{"version"}, 0},
        {{"sandbox", "set-env", "orders", "MCP_URL=http://new-address:8080/mcp", "-n", ns.name()},
         0},
        // The trusted probe: without it a denial seen from the pod is unproven (exit 3).
        {{"sandbox", "verify", "orders", "-n", ns.name(), "--egress-target", harness::outsideUrl(),
          "--trusted-probe", "curlimages/curl:8"},
         0},
    };
    for (const auto& [args, expected] : commands) {
        auto result = underMemcheck(args);
        INFO(args[0] << " " << (args.size() > 1 ? args[1] : "") << ": exit " << result.exitCode
                     << "\n"
                     << result.err);
        CHECK(result.exitCode == expected);
    }
    REQUIRE(harness::rossoctl({"project", "delete", ns.name(), "--yes"}, {}, {}, 240).exitCode ==
            0);
}
