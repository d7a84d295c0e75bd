// Walk 6 M2: a Ctrl-C during `sandbox cp FILE S:PATH` left the pod's file replaced by the first
// 38.7 MB of 150. The script rossoctl sends is run here, with this machine's sh and tar, on an
// archive cut short and on the whole one.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cp_fixtures.hpp"
#include "local_shell.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using rossoctl::testing::execRan;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;
namespace fs = std::filesystem;

namespace {

std::string contentOf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("walk 6 M2: a copy into the pod cut short leaves the file the pod had",
          "[sandbox][cp][command]") {
    TempDir local;
    const std::string payload(300000, 'n');
    local.write("model.bin", payload);
    TestHost host;
    testing::serveCpOrders(host);
    host.server.onExec("team1", "orders", execRan("f - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan("", "", 0));
    const int exitCode =
        host.run({"sandbox", "cp", local.file("model.bin"), "orders:/workspace/model.bin"});
    INFO(host.out.str() << host.err.str());
    REQUIRE(exitCode == 0);
    REQUIRE(host.server.execs.size() == 2);
    std::vector<std::string> untar = host.server.execs[1].command;
    const std::string archive = *host.server.execs[1].stdinText;
    REQUIRE(archive.size() > payload.size());

    TempDir pod;  // the pod's /workspace, here
    pod.write("model.bin", "what I had\n");
    untar.at(4) = pod.path();
    const auto [cutStatus, cutOut] = testing::runHere(untar, archive.substr(0, archive.size() / 3),
                                                      testing::StdinAfterInput::Ends);
    CHECK(cutStatus != 0);
    CHECK(contentOf(pod.file("model.bin")) == "what I had\n");
    // Nothing of the cut copy is left beside it.
    CHECK(std::distance(fs::directory_iterator(pod.path()), fs::directory_iterator()) == 1);

    const auto [wholeStatus, wholeOut] =
        testing::runHere(untar, archive, testing::StdinAfterInput::Ends);
    CHECK(wholeStatus == 0);
    CHECK(contentOf(pod.file("model.bin")) == payload);
    CHECK(std::distance(fs::directory_iterator(pod.path()), fs::directory_iterator()) == 1);
}
