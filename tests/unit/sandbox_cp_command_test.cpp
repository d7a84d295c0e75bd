// sandbox cp against a routed fake apiserver and scripted exec sessions: bad input sends
// nothing, both directions with and without tar, a hostile stream leaves the destination clean.
#include <fmt/format.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cp_fixtures.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::statusBody;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;
namespace fs = std::filesystem;

namespace {

void serveOrders(TestHost& host) {
    testing::serveCpOrders(host);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

unsigned modeOf(const std::string& path) {
    struct stat info {};
    ::lstat(path.c_str(), &info);
    return info.st_mode & 07777;
}

// Entries of a tar stream: "path type size mode" per line, and the file contents by path.
std::map<std::string, std::string> tarFiles(const std::string& archive,
                                            std::vector<std::string>* listing = nullptr) {
    std::map<std::string, std::string> files;
    std::string current;
    app::run::TarReader reader({[&](const app::run::TarEntry& entry) {
                                    current = entry.path;
                                    if (listing)
                                        listing->push_back(fmt::format("{} {} {:o}", entry.path,
                                                                       static_cast<int>(entry.type),
                                                                       entry.mode));
                                    if (entry.type == app::run::TarEntryType::File) files[current];
                                },
                                [&](std::string_view bytes) { files[current].append(bytes); },
                                {}});
    reader.feed(archive);
    return files;
}

}  // namespace

TEST_CASE("sandbox cp: every help example parses and validates", "[sandbox][cp][command]") {
    testing::checkHelpExamples({"sandbox", "cp"});
}

TEST_CASE("sandbox cp rejects bad input before sending anything", "[sandbox][cp][command]") {
    TempDir dir;
    dir.write("full/keep.txt", "mine");
    dir.write("file.txt", "mine");
    const std::vector<std::vector<std::string>> bad = {
        {"sandbox", "cp", "orders:/a", "other:/b"},
        {"sandbox", "cp", dir.file("file.txt"), dir.file("x")},
        {"sandbox", "cp", "Bad!:/a", dir.file("x")},
        {"sandbox", "cp", "orders:", dir.file("x")},
        {"sandbox", "cp", "orders:/a", dir.file("x"), "-c", "Side_Car"},
        {"sandbox", "cp", "orders:/a", dir.file("x"), "--max-bytes", "0"},
        {"sandbox", "cp", "orders:/a", dir.file("x"), "--max-files", "1.5"},
        {"sandbox", "cp", "orders:/a", dir.file("no/such/dir/x")},
        // A local directory with contents, or a file, is not overwritten without --force.
        {"sandbox", "cp", "orders:/workspace/full", dir.path()},
        {"sandbox", "cp", "orders:/workspace/.", dir.file("full")},
        {"sandbox", "cp", "orders:/workspace/file.txt", dir.file("file.txt")},
    };
    testing::checkUsageErrors(bad);
    CHECK(readFile(dir.file("full/keep.txt")) == "mine");
    TestHost exists;
    exists.run({"sandbox", "cp", "orders:/workspace/full", dir.path()});
    CHECK(
        exists.err.str().find("already exists and is not empty; nothing was copied: add --force") !=
        std::string::npos);
    TestHost missing;  // a local source that is not there: not found (1), nothing sent
    CHECK(missing.run({"sandbox", "cp", dir.file("nothing"), "orders:/workspace"}) == kExitError);
    CHECK(missing.server.requests.empty());
}

TEST_CASE("sandbox cp from the pod with tar: modes kept, bytes and files reported",
          "[sandbox][cp][command]") {
    TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addDirectory("./sub");
    writer.addFile("./run.sh", "#!/bin/sh\necho hi\n", 0755);
    writer.addFile("./sub/data.bin", std::string(300'000, '\x01'), 0640);
    writer.addSymlink("./sub/link", "../run.sh");
    writer.finish();
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    REQUIRE(host.run({"sandbox", "cp", "orders:/workspace/out", dir.file("out")}) == 0);
    REQUIRE(host.server.execs.size() == 2);
    CHECK(host.server.execs[0].container == "agent");
    CHECK(host.server.execs[0].command.back() == "/workspace/out");
    CHECK(host.server.execs[1].command == std::vector<std::string>{"sh", "-c",
                                                                   "cd \"$1\" && exec tar cf - .",
                                                                   "sh", "/workspace/out"});
    CHECK(readFile(dir.file("out/run.sh")) == "#!/bin/sh\necho hi\n");
    CHECK(modeOf(dir.file("out/run.sh")) == 0755);
    CHECK(modeOf(dir.file("out/sub/data.bin")) == 0640);
    CHECK(fs::read_symlink(dir.file("out/sub/link")) == "../run.sh");
    CHECK(host.err.str() == "copied 2 files, 300,018 bytes\n");
    CHECK(host.server.writes().empty());
}

TEST_CASE("sandbox cp of one file from the pod lands under the name given",
          "[sandbox][cp][command]") {
    TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addFile("./report.pdf", "%PDF", 0644);
    writer.finish();
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("f - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    REQUIRE(host.run({"sandbox", "cp", "orders:/workspace/report.pdf", dir.file("r.pdf")}) == 0);
    CHECK(host.server.execs[1].command.back() == "report.pdf");
    CHECK(host.server.execs[1].command[4] == "/workspace");
    CHECK(readFile(dir.file("r.pdf")) == "%PDF");
    // Nothing else is left in the directory (the staging directory is gone).
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
    CHECK(host.err.str() == "copied 1 file, 4 bytes\n");
}

TEST_CASE("sandbox cp: a hostile tar from the pod leaves the destination clean",
          "[sandbox][cp][command]") {
    TempDir dir;
    const std::string outside = dir.file("outside");
    fs::create_directories(outside);
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addSymlink("./x", "../../..");
    writer.addSymlink("./abs", "/etc");
    writer.addSymlink("./up", "../outside");
    writer.addFile("./up/planted", "pwned", 0644);  // through the link, before it is checked
    writer.addFile("./../escaped", "pwned", 0644);
    writer.addFile("./suid", "x", 04755);
    writer.addFile("./ok.txt", "fine", 0644);
    writer.finish();
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    CHECK(host.run({"sandbox", "cp", "orders:/workspace", dir.file("dest")}) == kExitError);
    CHECK(fs::is_empty(outside));
    CHECK_FALSE(fs::exists(dir.file("escaped")));
    for (const char* link : {"x", "abs"})
        CHECK_FALSE(fs::exists(fs::symlink_status(dir.file(std::string("dest/") + link))));
    // "up/planted" came before the link "up": a directory of its own, inside, never the link.
    CHECK_FALSE(fs::is_symlink(fs::symlink_status(dir.file("dest/up"))));
    CHECK(readFile(dir.file("dest/ok.txt")) == "fine");
    CHECK(modeOf(dir.file("dest/suid")) == 0755);  // never setuid
    const std::string err = host.err.str();
    CHECK(err.find("warning: refused: x: symlink to ../../.. leaves the directory") !=
          std::string::npos);
    CHECK(err.find("warning: refused: abs: symlink to /etc") != std::string::npos);
    CHECK(err.find("refused (see the warnings)") != std::string::npos);
}

TEST_CASE("sandbox cp: caps stop a flood from the pod", "[sandbox][cp][command]") {
    TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addFile("./big\x1b[2J", std::string(2048, 'a'));
    writer.finish();
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    CHECK(host.run({"sandbox", "cp", "orders:/w", dir.file("d"), "--max-file-bytes", "1Ki"}) ==
          kExitError);
    CHECK(host.err.str().find("raise it with --max-file-bytes") != std::string::npos);
    CHECK(host.err.str().find('\x1b') == std::string::npos);  // the pod's name, escaped
    CHECK(fs::is_empty(dir.file("d")));
}

TEST_CASE("sandbox cp from a pod without tar: a listing, then one cat per file",
          "[sandbox][cp][command]") {
    TempDir dir;
    using namespace std::string_literals;
    // Files carry the mode stat printed (empty without stat: the executable bit decides).
    const std::string listing =
        "d\0./sub\0x\0./sub/tool\0\0f\0./a.txt\0"
        "640\0"
        "l\0./ln\0/etc/passwd\0f\0./../../evil\0\0o\0./fifo\0"s;
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - none\n", "", 0));
    host.server.onExec("team1", "orders", execRan(listing, "", 0));
    host.server.onExec("team1", "orders", execRan("#!/bin/sh\n", "", 0));
    host.server.onExec("team1", "orders", execRan("alpha\x1b[31m", "", 0));
    CHECK(host.run({"sandbox", "cp", "orders:/workspace", dir.file("dest")}) == kExitError);
    REQUIRE(host.server.execs.size() == 4);  // probe, listing, two cats: nothing for ../../evil
    CHECK(host.server.execs[2].command ==
          std::vector<std::string>{"sh", "-c", "cd \"$1\" && exec cat \"$2\"", "sh", "/workspace",
                                   "./sub/tool"});
    CHECK(readFile(dir.file("dest/sub/tool")) == "#!/bin/sh\n");
    CHECK(modeOf(dir.file("dest/sub/tool")) == 0755);
    CHECK(readFile(dir.file("dest/a.txt")) == "alpha\x1b[31m");
    CHECK(modeOf(dir.file("dest/a.txt")) == 0640);
    CHECK_FALSE(fs::exists(fs::symlink_status(dir.file("dest/ln"))));
    const std::string err = host.err.str();
    CHECK(err.find("note: the image has no tar; copied file by file with sh and cat") == 0);
    CHECK(err.find("copied 2 files, 20 bytes\n") != std::string::npos);
    CHECK(err.find("fifo: not a regular file") != std::string::npos);
    CHECK(err.find("\x1b") == std::string::npos);
}

TEST_CASE("sandbox cp to the pod streams a tar into tar xf -", "[sandbox][cp][command]") {
    TempDir dir;
    dir.write("data/a.txt", "alpha");
    dir.write("data/bin/tool", "#!/bin/sh\n", 04755);
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan("", "", 0));
    REQUIRE(host.run({"sandbox", "cp", dir.file("data"), "orders:/workspace"}) == 0);
    REQUIRE(host.server.execs.size() == 2);
    const auto& untar = host.server.execs[1].command;
    CHECK(untar.at(4) == "/workspace/data");
    CHECK(untar.at(5) == "create");
    std::vector<std::string> listing;
    const auto files = tarFiles(*host.server.execs[1].stdinText, &listing);
    CHECK(files.at("./a.txt") == "alpha");
    CHECK(files.at("./bin/tool") == "#!/bin/sh\n");
    CHECK(std::find(listing.begin(), listing.end(), "./bin/tool 0 755") != listing.end());
    CHECK(host.err.str() == "copied 2 files, 15 bytes\n");
}

TEST_CASE("sandbox cp to a pod without tar: mkdir -p, then head -c SIZE > NAME and chmod",
          "[sandbox][cp][command]") {
    TempDir dir;
    dir.write("data/sub/a.txt", "alpha", 0600);
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("n - none\n", "", 0));
    host.server.onExec("team1", "orders", execRan("", "", 0));
    REQUIRE(host.run({"sandbox", "cp", dir.file("data"), "orders:/workspace/copy"}) == 0);
    REQUIRE(host.server.execs.size() == 3);
    const auto& mkdir = host.server.execs[1].command;
    CHECK(std::vector<std::string>(mkdir.begin() + 4, mkdir.end()) ==
          std::vector<std::string>{"/workspace/copy", "./sub"});
    const auto& cat = host.server.execs[2].command;
    CHECK(std::vector<std::string>(cat.begin() + 4, cat.end()) ==
          std::vector<std::string>{"/workspace/copy", "./sub/a.txt", "600", "5"});
    CHECK_THAT(cat[2], Catch::Contains("head -c \"$4\" > \"$2\""));
    CHECK(*host.server.execs[2].stdinText == "alpha");
    // Told the length, never an end of input: containerd can drop the bytes in flight when
    // stdin is half-closed, and the file would be short with exit 0 (containerd#12734).
    CHECK_FALSE(*host.server.execs[2].stdinHalfClosed);
    CHECK(host.err.str().find("copied 1 file, 5 bytes") != std::string::npos);
}

TEST_CASE("sandbox cp: a missing sandbox or path, a refused exec, a failing tar",
          "[sandbox][cp][command]") {
    TempDir dir;
    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "cp", "ghost:/a", dir.file("a")}) == kExitError);
    CHECK(missing.err.str().find("sandbox/ghost not found in namespace team1") !=
          std::string::npos);

    TestHost noPath;
    serveOrders(noPath);
    noPath.server.onExec("team1", "orders", execRan("n - tar\n", "", 0));
    CHECK(noPath.run({"sandbox", "cp", "orders:/nope", dir.file("a")}) == kExitError);
    CHECK(noPath.err.str().find("orders:/nope: no such file or directory in the pod") !=
          std::string::npos);

    TestHost forbidden;
    serveOrders(forbidden);
    forbidden.server.onExec(
        "team1", "orders",
        testing::execRefused(403, statusBody(403, "Forbidden", "pods \"orders\" is forbidden")));
    CHECK(forbidden.run({"sandbox", "cp", "orders:/a", dir.file("a")}) == kExitError);
    CHECK(forbidden.err.str().find("forbidden") != std::string::npos);

    TestHost failing;
    serveOrders(failing);
    failing.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    failing.server.onExec("team1", "orders", execRan("", "tar: \x1b[2Jdenied\n", 2));
    CHECK(failing.run({"sandbox", "cp", "orders:/a", dir.file("b")}) == kExitError);
    CHECK(failing.err.str().find("tar failed in the pod (exit 2): tar: ") != std::string::npos);
    CHECK(failing.err.str().find("\x1b") == std::string::npos);
}

TEST_CASE(
    "sandbox cp of a directory out of the pod twice: the second run stops with exit 2, "
    "never nests a copy in the first",
    "[sandbox][cp][command]") {
    TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addFile("./a.txt", "alpha", 0644);
    writer.finish();
    struct Run {
        int exitCode;
        std::unique_ptr<TestHost> host;
    };
    const auto copyData = [&](std::vector<std::string> extra) {
        auto host = std::make_unique<TestHost>();
        serveOrders(*host);
        host->server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
        host->server.onExec("team1", "orders", execRan(archive, "", 0));
        std::vector<std::string> argv{"sandbox", "cp", "orders:/workspace/data", dir.file("back")};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const int exitCode = host->run(argv);
        return Run{exitCode, std::move(host)};
    };
    const auto first = copyData({});
    REQUIRE(first.exitCode == 0);
    CHECK(readFile(dir.file("back/a.txt")) == "alpha");

    // kubectl's reading: DST is the copy. The same command again finds it taken.
    const auto again = copyData({});
    CHECK(again.exitCode == kExitUsage);
    CHECK(again.host->err.str().find("back already exists and is not empty; nothing was copied: "
                                     "a directory from the pod becomes") != std::string::npos);
    CHECK(again.host->server.execs.size() == 1);  // the probe only: nothing was copied
    CHECK_FALSE(fs::exists(dir.file("back/data")));

    // --force writes into it again: the same tree, not a nested one.
    const auto forced = copyData({"--force"});
    CHECK(forced.exitCode == 0);
    CHECK(forced.host->err.str() == "copied 1 file, 5 bytes\n");
    CHECK_FALSE(fs::exists(dir.file("back/data")));
    CHECK(std::distance(fs::directory_iterator(dir.file("back")), fs::directory_iterator()) == 1);

    // A file still goes inside a directory DST, as cp puts it.
    std::string one;
    app::run::TarWriter fileWriter(one, 0);
    fileWriter.addFile("./report.pdf", "%PDF", 0644);
    fileWriter.finish();
    TestHost file;
    serveOrders(file);
    file.server.onExec("team1", "orders", execRan("f - tar\n", "", 0));
    file.server.onExec("team1", "orders", execRan(one, "", 0));
    REQUIRE(file.run({"sandbox", "cp", "orders:/workspace/report.pdf", dir.file("back")}) == 0);
    CHECK(readFile(dir.file("back/report.pdf")) == "%PDF");
}
