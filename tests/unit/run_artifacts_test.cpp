// Artifact collection: hashes, and nothing written outside the directory whatever the tar says.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "rossoctl/app/run/artifacts.hpp"
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
    REQUIRE(collector.artifacts().size() == 2);
    CHECK(collector.artifacts()[0].path == "result.txt");
    CHECK(collector.artifacts()[0].bytes == 3);
    CHECK(collector.artifacts()[1].path == "plots/p.bin");
    CHECK(collector.artifacts()[1].sha256 == sha256Hex(binary));
    CHECK(slurp(dir.file("out/plots/p.bin")) == binary);
    CHECK(fs::read_symlink(dir.file("out/latest")) == "plots/p.bin");
    CHECK((fs::status(dir.file("out/plots/p.bin")).permissions() & fs::perms::owner_exec) !=
          fs::perms::none);

    SECTION("hash only, without a directory") {
        ArtifactCollector hashOnly("");
        hashOnly.feed(archive);
        hashOnly.finish();
        CHECK(hashOnly.artifacts().size() == 2);
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
    writer.addSymlink("ok", "sub");
    writer.addSymlink("chain", "ok/../..");
    writer.addSymlink("a/b/deep", "../../..");
    writer.finish();

    ArtifactCollector collector(target);
    collector.feed(archive);
    collector.finish();
    CHECK(collector.artifacts().empty());
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
        CHECK(again.artifacts().empty());
        CHECK(again.rejected().size() == 1);
        CHECK_FALSE(fs::exists(dir.file("planted.txt")));
    }
}
