// `rossoctl help [COMMAND...]` (walk 6 MINOR 17: "help" was an unknown command, exit 2).
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using rossoctl::testing::TestHost;

TEST_CASE("help prints the help of the command it names, as kubectl help does", "[help][command]") {
    TestHost root;
    CHECK(root.run({"help"}) == 0);
    CHECK(root.out.str().find("Subcommands:") != std::string::npos);
    CHECK(root.out.str().find("sandbox") != std::string::npos);

    TestHost run;
    CHECK(run.run({"help", "sandbox", "run"}) == 0);
    TestHost flag;
    CHECK(flag.run({"sandbox", "run", "--help"}) == 0);
    CHECK(run.out.str() == flag.out.str());
    CHECK(run.err.str().empty());
    CHECK(run.server.requests.empty());
}

TEST_CASE("help of a word that is no command prints the help of the command before it",
          "[help][command]") {
    // As `sandbox runn --help` does, and kubectl help: the nearest help, exit 0.
    TestHost help;
    CHECK(help.run({"help", "sandbox", "runn"}) == 0);
    TestHost flag;
    CHECK(flag.run({"sandbox", "--help"}) == 0);
    CHECK(help.out.str() == flag.out.str());
}

TEST_CASE("sandbox run -i points to --stdin (docker's habit, walk 6 MINOR 8)", "[help][command]") {
    TestHost host;
    CHECK(host.run({"sandbox", "run", "-i", "--", "python3", "-"}) == 125);
    CHECK(host.err.str() ==
          "error: unknown shorthand flag: 'i' in -i; to pass stdin to the command use --stdin "
          "(see 'rossoctl sandbox run --help')\n");
    CHECK(host.server.requests.empty());
}
