// Artifact collection: hashes, and nothing written outside the directory whatever the tar says.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "rossoctl/app/run/artifacts.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "temp_dir.hpp"

using namespace rossoctl::app::run;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("sha256 matches the known digest", "[run][artifacts]") {
    CHECK(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("safeRelativePath refuses absolute paths and ..", "[run][artifacts]") {
    CHECK(safeRelativePath("./a/b") == "a/b");
    CHECK(safeRelativePath(".") == "");
    CHECK(safeRelativePath("a//b/./c") == "a/b/c");
    CHECK_FALSE(safeRelativePath("/etc/passwd"));
    CHECK_FALSE(safeRelativePath("../x"));
    CHECK_FALSE(safeRelativePath("a/../../x"));
    CHECK_FALSE(safeRelativePath(""));
}

TEST_CASE("artifacts are written, hashed and listed", "[run][artifacts]") {
    rossoctl::testing::TempDir dir;
    std::string binary(256 * 40, '\0');
    for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i & 0xFF);
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addDirectory(".");
    writer.addFile("./result.txt", "42\n");
    writer.addFile("./plots/p.bin", binary, 0755);
    writer.addSymlink("./latest", "plots/p.bin");
    writer.finish();

    ArtifactCollector collector(dir.file("out"));
    for (size_t pos = 0; pos < archive.size(); pos += 1000)
        collector.feed(std::string_view(archive).substr(pos, 1000));
    collector.finish();
    REQUIRE(collector.rejected().empty());
    REQUIRE(collector.files().size() == 2);
    CHECK(collector.files()[0].path == "result.txt");
    CHECK(collector.files()[0].bytes == 3);
    CHECK(collector.files()[1].path == "plots/p.bin");
    CHECK(collector.files()[1].sha256 == sha256Hex(binary));
    CHECK(slurp(dir.file("out/plots/p.bin")) == binary);
    CHECK(fs::read_symlink(dir.file("out/latest")) == "plots/p.bin");
    CHECK((fs::status(dir.file("out/plots/p.bin")).permissions() & fs::perms::owner_exec) !=
          fs::perms::none);

    SECTION("hash only, without a directory") {
        ArtifactCollector hashOnly("");
        hashOnly.feed(archive);
        hashOnly.finish();
        CHECK(hashOnly.files().size() == 2);
    }
}

TEST_CASE("hostile archives write nothing outside the directory", "[run][artifacts]") {
    rossoctl::testing::TempDir dir;
    const std::string target = dir.file("artifacts");
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addFile("../escaped.txt", "x");
    writer.addFile("/tmp/absolute-escape.txt", "x");
    writer.addSymlink("up", "..");
    writer.addSymlink("abs", "/etc");
    writer.addDirectory("sub");
    writer.addSymlink("ok", "sub");
    writer.addSymlink("chain", "ok/../..");
    writer.addSymlink("a/b/deep", "../../..");
    writer.finish();

    ArtifactCollector collector(target);
    collector.feed(archive);
    collector.finish();
    CHECK(collector.files().empty());
    CHECK(collector.rejected().size() == 6);  // all but "ok"
    CHECK_FALSE(fs::exists(dir.file("escaped.txt")));
    CHECK_FALSE(fs::exists("/tmp/absolute-escape.txt"));
    CHECK_FALSE(fs::is_symlink(target + "/up"));
    CHECK_FALSE(fs::is_symlink(target + "/abs"));
    CHECK_FALSE(fs::is_symlink(target + "/chain"));
    CHECK(fs::is_symlink(target + "/ok"));

    SECTION("a file is never written through a symlink already in the directory") {
        fs::create_directory_symlink(dir.path(), target + "/evil");
        std::string second;
        TarWriter w(second, 0);
        w.addFile("evil/planted.txt", "x");
        w.finish();
        ArtifactCollector again(target);
        again.feed(second);
        again.finish();
        CHECK(again.files().empty());
        CHECK(again.rejected().size() == 1);
        CHECK_FALSE(fs::exists(dir.file("planted.txt")));
    }
}

namespace {

// Every path below `root`, links followed, stays below it (the sentinel's directory is above).
void checkNothingResolvesOutside(const std::string& root) {
    const auto base = fs::canonical(root);
    for (auto it = fs::recursive_directory_iterator(root); it != fs::end(it); ++it) {
        std::error_code error;
        const auto resolved = fs::canonical(it->path(), error);
        if (error) continue;  // a dangling link leads nowhere at all
        const auto relative = resolved.lexically_relative(base).string();
        INFO(it->path() << " -> " << resolved);
        CHECK((!relative.empty() && !relative.starts_with("..")));
    }
}

std::string pairArchive(bool linkFirst) {
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addDirectory("a");
    writer.addDirectory("b");
    // Each target passes a text check made in archive order; together they climb two levels.
    if (linkFirst) writer.addSymlink("a/e", "../b/l/../../secret.txt");
    writer.addSymlink("b/l", "..");
    if (!linkFirst) writer.addSymlink("a/e", "../b/l/../../secret.txt");
    writer.addSymlink("a/f", "../b/l/../../secret.txt");
    writer.finish();
    return archive;
}

}  // namespace

TEST_CASE("a link pair never resolves outside, in either archive order", "[run][artifacts]") {
    rossoctl::testing::TempDir dir;
    const std::string sentinel = dir.write("secret.txt", "host secret\n");
    const std::string target = dir.file("deep/results");
    for (bool linkFirst : {true, false}) {
        fs::remove_all(dir.file("deep"));
        ArtifactCollector collector(target);
        collector.feed(pairArchive(linkFirst));
        collector.finish();
        CHECK_FALSE(fs::exists(target + "/a/e"));
        CHECK_FALSE(fs::is_symlink(target + "/a/e"));
        // b/l -> .. leads to the directory itself: inside, so it may stay.
        CHECK(fs::canonical(target + "/b/l") == fs::canonical(target));
        checkNothingResolvesOutside(target);
        CHECK(slurp(sentinel) == "host secret\n");
    }
}

TEST_CASE("absolute, NUL-bearing and dangling link targets are refused", "[run][artifacts]") {
    rossoctl::testing::TempDir dir;
    const std::string target = dir.file("out");
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addSymlink("abs", "/etc/passwd");
    writer.addSymlink("dangling", "nothing-here");
    writer.addFile("real.txt", "x");
    writer.addSymlink("good", "real.txt");
    // A pax linkpath with a NUL: checked whole, it once was created cut at the NUL ("..").
    std::string nulTarget("..\0/x/y/z/", 10);
    nulTarget.append(100, 'p');  // append, not +: GCC 12 -O2 warns falsely (-Warray-bounds)
    writer.addSymlink("parent", nulTarget);
    writer.finish();
    REQUIRE(archive.find(std::string("linkpath=..\0/x", 14)) != std::string::npos);

    ArtifactCollector collector(target);
    collector.feed(archive);
    collector.finish();
    CHECK_FALSE(fs::is_symlink(target + "/abs"));
    CHECK_FALSE(fs::is_symlink(target + "/dangling"));
    CHECK_FALSE(fs::is_symlink(target + "/parent"));
    CHECK(fs::read_symlink(target + "/good") == "real.txt");
    CHECK(collector.rejected().size() == 3);
    checkNothingResolvesOutside(target);
}

TEST_CASE("hard links are refused, and a file replaces rather than writes through",
          "[run][artifacts]") {
    rossoctl::testing::TempDir dir;
    const std::string outside = dir.write("outside.txt", "keep\n");
    const std::string target = dir.file("out");
    fs::create_directories(target);
    fs::create_hard_link(outside, target + "/linked.txt");
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addFile("linked.txt", "overwritten\n");
    writer.finish();
    archive.insert(archive.size() - 1024, [] {
        std::string hard;
        TarWriter w(hard, 0);
        w.addFile("h", "");
        hard[156] = '1';  // typeflag: hard link (checksum fixed below)
        unsigned sum = 0;
        for (size_t i = 0; i < 512; ++i)
            sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)hard[i];
        snprintf(hard.data() + 148, 8, "%06o", sum);
        return hard.substr(0, 512);
    }());
    ArtifactCollector collector(target);
    collector.feed(archive);
    collector.finish();
    CHECK(slurp(outside) == "keep\n");
    CHECK(slurp(target + "/linked.txt") == "overwritten\n");
    CHECK(collector.rejected().size() == 1);
}

TEST_CASE("caps stop an archive at its header, with the flag to raise them", "[run][artifacts]") {
    rossoctl::testing::TempDir dir;
    rossoctl::app::ExtractLimits limits;
    limits.maxFileBytes = 1000;
    limits.maxBytes = 1500;
    limits.maxEntries = 4;

    SECTION("one file over the per-file cap: refused before its data (a 1 TB sparse file)") {
        std::string archive;
        TarWriter writer(archive, 0);
        writer.addFile("big.bin", std::string(2000, '\0'));
        ArtifactCollector collector(dir.file("out"), limits);
        // The header alone: a 1 TB file's data never has to arrive.
        REQUIRE_THROWS_WITH(collector.feed(archive.substr(0, 512)),
                            Catch::Contains("--artifacts-max-file-bytes"));
        CHECK_FALSE(fs::exists(dir.file("out/big.bin")));
    }
    SECTION("all files together over the cap") {
        std::string archive;
        TarWriter writer(archive, 0);
        writer.addFile("a", std::string(900, 'a'));
        writer.addFile("b", std::string(900, 'b'));
        writer.finish();
        ArtifactCollector collector(dir.file("out"), limits);
        CHECK_THROWS_WITH(collector.feed(archive), Catch::Contains("--artifacts-max-bytes"));
    }
    SECTION("too many entries") {
        std::string archive;
        TarWriter writer(archive, 0);
        for (int i = 0; i < 5; ++i) writer.addDirectory("d" + std::to_string(i));
        writer.finish();
        ArtifactCollector collector(dir.file("out"), limits);
        CHECK_THROWS_WITH(collector.feed(archive), Catch::Contains("--artifacts-max-files"));
    }
    SECTION("the pull interface applies the same caps") {
        std::string archive;
        TarWriter writer(archive, 0);
        writer.addFile("big.bin", std::string(2000, '\0'));
        writer.finish();
        size_t offset = 0;
        auto source = [&](char* buffer, size_t size) {
            const size_t n = std::min(size, archive.size() - offset);
            std::copy_n(archive.data() + offset, n, buffer);
            offset += n;
            return n;
        };
        CHECK_THROWS_AS(rossoctl::app::extractTar(dir.file("out"), source, limits),
                        rossoctl::Error);
    }
}
