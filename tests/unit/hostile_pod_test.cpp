// What a hostile pod can send to `sandbox cp`: each case is an attack from the pod's side of
// the exec stream, and the user's files, memory and terminal must come out of it untouched.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "rossoctl/app/run/tar.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

void serveOrders(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson(
        "GET", kSandboxes + "/orders", 200,
        {{"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "uid-orders"}}},
         {"spec", json::object()},
         {"status", {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"}}}});
    json pod = {{"metadata",
                 {{"name", "orders"},
                  {"namespace", "team1"},
                  {"uid", "pod-uid"},
                  {"ownerReferences",
                   {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
                {"spec", {{"containers", {{{"name", "agent"}}}}}},
                {"status", {{"phase", "Running"}}}};
    host.server.onJson(
        "GET", kPods, 200,
        {{"kind", "List"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", {pod}}});
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t entriesIn(const std::string& dir) {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("sandbox cp of one file: a tar that turns the file into a symlink lands nothing",
          "[sandbox][cp][hostile]") {
    TempDir dir;
    dir.write(".ssh/id_rsa", "SECRET");
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addFile("./report.pdf", "%PDF", 0644);
    writer.addDirectory("./.ssh");
    writer.addFile("./.ssh/id_rsa", "decoy", 0600);
    writer.addSymlink("./report.pdf", ".ssh/id_rsa");  // links are made last
    writer.finish();
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("f - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    CHECK(host.run({"sandbox", "cp", "orders:/workspace/report.pdf", dir.file("report.pdf")}) ==
          kExitError);
    CHECK_FALSE(fs::exists(fs::symlink_status(dir.file("report.pdf"))));
    CHECK(readFile(dir.file(".ssh/id_rsa")) == "SECRET");
    CHECK(entriesIn(dir.path()) == 1);  // .ssh only: the staging directory is gone
    CHECK(host.err.str().find("report.pdf as a symlink or something else than a regular file") !=
          std::string::npos);
}

TEST_CASE("sandbox cp: a path probe that floods or never answers is cut off",
          "[sandbox][cp][hostile]") {
    TempDir dir;
    TestHost flood;
    serveOrders(flood);
    flood.server.onExec("team1", "orders", execRan("f - tar\n" + std::string(1 << 20, 'A'), "", 0));
    CHECK(flood.run({"sandbox", "cp", "orders:/workspace/a", dir.file("a")}) == kExitError);
    CHECK(flood.err.str().find("printed more than 4096 bytes") != std::string::npos);
    CHECK(flood.server.execs.size() == 1);

    TestHost stall;
    serveOrders(stall);
    auto silent = execRan("", "", 0);
    silent.hangs = true;
    stall.server.onExec("team1", "orders", silent);
    CHECK(stall.run({"sandbox", "cp", "orders:/workspace/a", dir.file("a")}) == kExitError);
    CHECK(stall.err.str().find("did not finish within 30s") != std::string::npos);
    CHECK(fs::is_empty(dir.path()));
}

namespace {

// One ustar header block as a hostile tar writes it (any typeflag, any size), checksum right.
std::string rawHeader(const std::string& name, char typeflag, uint64_t size) {
    std::string block(512, '\0');
    std::copy_n(name.data(), std::min<size_t>(name.size(), 100), block.data());
    const std::string mode = "0000644", sizeText = fmt::format("{:011o}", size);
    std::copy(mode.begin(), mode.end(), block.begin() + 100);
    std::copy(sizeText.begin(), sizeText.end(), block.begin() + 124);
    block[156] = typeflag;
    std::copy_n("ustar", 6, block.begin() + 257);
    std::copy_n("00", 2, block.begin() + 263);
    std::fill(block.begin() + 148, block.begin() + 156, ' ');
    unsigned sum = 0;
    for (unsigned char byte : block) sum += byte;
    const std::string checksum = fmt::format("{:06o}", sum);
    std::copy(checksum.begin(), checksum.end(), block.begin() + 148);
    block[154] = '\0';
    return block;
}

// A metadata entry (GNU 'L'/'K' or pax 'x'/'g') with its body, padded to a block.
std::string metadataEntry(char typeflag, const std::string& body) {
    return rawHeader("././@LongLink", typeflag, body.size()) + body +
           app::run::TarWriter::padding(body.size());
}

std::string paxRecord(const std::string& key, const std::string& value) {
    const size_t body = key.size() + value.size() + 3;
    size_t length = body + 1;
    while (std::to_string(length).size() + body != length) ++length;
    return fmt::format("{} {}={}\n", length, key, value);
}

int copyDirectoryOut(TestHost& host, const std::string& archive, const std::string& dest,
                     std::vector<std::string> flags = {}) {
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    std::vector<std::string> argv = {"sandbox", "cp", "orders:/workspace", dest};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return host.run(argv);
}

}  // namespace

TEST_CASE("sandbox cp: a name or link target over PATH_MAX is refused, never held or printed",
          "[sandbox][cp][hostile]") {
    for (char type : {'L', 'K'}) {
        TempDir dir;
        std::string archive = metadataEntry(type, std::string(PATH_MAX + 1, 'n') + '\0');
        archive += rawHeader("short", type == 'L' ? '0' : '2', 0) + std::string(1024, '\0');
        TestHost host;
        CHECK(copyDirectoryOut(host, archive, dir.file("d")) == kExitError);
        CHECK(host.err.str().find("refused") != std::string::npos);
        CHECK(host.err.str().size() < 1024);
    }
    TempDir dir;
    std::string archive =
        metadataEntry('x', paxRecord("linkpath", std::string(PATH_MAX + 1, 'n'))) +
        rawHeader("ln", '2', 0) + std::string(1024, '\0');
    TestHost host;
    CHECK(copyDirectoryOut(host, archive, dir.file("d")) == kExitError);
    CHECK(host.err.str().find("a pax linkpath of 4097 bytes (over 4096); refused") !=
          std::string::npos);
}

TEST_CASE("sandbox cp: pax and long-name headers count against --max-bytes",
          "[sandbox][cp][hostile]") {
    TempDir dir;
    std::string archive;
    // Endless global headers: no entry ever comes, only metadata to read and hold.
    for (int i = 0; i < 50; ++i)
        archive += metadataEntry('g', paxRecord("comment", std::string(2000, 'c')));
    archive += std::string(1024, '\0');
    TestHost host;
    CHECK(copyDirectoryOut(host, archive, dir.file("d"), {"--max-bytes", "8Ki"}) == kExitError);
    CHECK(host.err.str().find("metadata headers") != std::string::npos);
    CHECK(host.err.str().find("raise it with --max-bytes") != std::string::npos);
}

TEST_CASE("sandbox cp: the refusal report lists the first 20, then counts",
          "[sandbox][cp][hostile]") {
    TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    for (int i = 0; i < 300; ++i) writer.addFile(fmt::format("../escape-{}", i), "x");
    writer.finish();
    TestHost host;
    CHECK(copyDirectoryOut(host, archive, dir.file("d")) == kExitError);
    const std::string err = host.err.str();
    size_t refusedLines = 0;
    for (size_t at = err.find("warning: refused"); at != std::string::npos;
         at = err.find("warning: refused", at + 1))
        ++refusedLines;
    CHECK(refusedLines == 21);
    CHECK(err.find("and 280 more entries refused") != std::string::npos);
}

TEST_CASE("sandbox cp without tar: the listing is parsed record by record, capped as it comes",
          "[sandbox][cp][hostile]") {
    TempDir dir;
    // Three records with --max-files 2: refused at the third, before the rest is read (the old
    // parser split all of it first and reported the unterminated tail instead).
    const std::string capped = "d\0./a\0d\0./b\0d\0./c\0d\0./unterminated"s;
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - none\n", "", 0));
    host.server.onExec("team1", "orders", execRan(capped, "", 0));
    CHECK(host.run({"sandbox", "cp", "orders:/w", dir.file("d"), "--max-files", "2"}) ==
          kExitError);
    CHECK(host.err.str().find("the pod lists more than 2 entries") != std::string::npos);
    CHECK(host.server.execs.size() == 2);  // no cat of anything listed

    // A name longer than any path: refused, not held.
    TestHost longName;
    serveOrders(longName);
    longName.server.onExec("team1", "orders", execRan("d - none\n", "", 0));
    longName.server.onExec("team1", "orders",
                           execRan("f\0./"s + std::string(PATH_MAX + 1, 'n') + "\0\0"s, "", 0));
    CHECK(longName.run({"sandbox", "cp", "orders:/w", dir.file("e")}) == kExitError);
    CHECK(longName.err.str().find("a name over 4096 bytes; refused") != std::string::npos);
    CHECK(longName.server.execs.size() == 2);
}

TEST_CASE("sandbox cp: a tar stream that stalls ends at --timeout", "[sandbox][cp][hostile]") {
    TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addFile("./first.txt", "one", 0644);  // then nothing more, and no exit
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    auto stalled = execRan(archive, "", 0);
    stalled.hangs = true;
    host.server.onExec("team1", "orders", stalled);
    CHECK(host.run({"sandbox", "cp", "orders:/workspace", dir.file("d"), "--timeout", "2m"}) ==
          kExitError);
    CHECK(host.err.str().find("tar did not finish within the copy's --timeout") !=
          std::string::npos);
    CHECK(host.clock.monotonic().time_since_epoch() < std::chrono::minutes(3));
}
