// The ustar writer and reader: round trips in any chunking, long names, binary data, and
// interoperation with the GNU tar the pods run.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <thread>

#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "temp_dir.hpp"

using namespace rossoctl::app::run;

namespace {

std::string allBytes(size_t size) {
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>((i * 7 + i / 256) & 0xFF);
    return data;
}

struct Read {
    std::vector<TarEntry> entries;
    std::map<std::string, std::string> contents;
};

Read readAll(const std::string& archive, size_t chunk) {
    Read read;
    std::string current;
    TarReader reader({[&](const TarEntry& entry) {
                          read.entries.push_back(entry);
                          current = entry.path;
                          read.contents[current];
                      },
                      [&](std::string_view bytes) { read.contents[current].append(bytes); },
                      [] {}});
    for (size_t pos = 0; pos < archive.size(); pos += chunk)
        reader.feed(std::string_view(archive).substr(pos, chunk));
    reader.finish();
    return read;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string kLongDir = std::string(120, 'd') + "/" + std::string(90, 'e');
// Over ustar's 255 characters in total, so it needs a pax header.
const std::string kVeryLong = std::string(150, 'x') + "/" + std::string(150, 'y') + "/file.bin";

std::string sampleArchive() {
    std::string archive;
    TarWriter writer(archive, 1'700'000'000);
    writer.addDirectory("out");
    writer.addFile("out/hello.txt", "hello\n");
    writer.addFile("out/empty", "");
    writer.addFile("out/data.bin", allBytes(70'001), 0755);
    writer.addFile(kLongDir + "/split.txt", "ustar prefix");
    writer.addFile(kVeryLong, allBytes(513));
    writer.addSymlink("out/link", "hello.txt");
    writer.finish();
    return archive;
}

}  // namespace

TEST_CASE("tar round trip keeps names, modes and bytes in any chunking", "[run][tar]") {
    const std::string archive = sampleArchive();
    REQUIRE(archive.size() % 512 == 0);
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{512}, size_t{4096}, archive.size()}) {
        INFO("chunk " << chunk);
        const Read read = readAll(archive, chunk);
        REQUIRE(read.entries.size() == 7);
        CHECK(read.entries[0].type == TarEntryType::Directory);
        CHECK(read.entries[0].path == "out");
        CHECK(read.contents.at("out/hello.txt") == "hello\n");
        CHECK(read.contents.at("out/empty").empty());
        CHECK(read.contents.at("out/data.bin") == allBytes(70'001));
        CHECK(read.entries[3].mode == 0755);
        CHECK(read.contents.at(kLongDir + "/split.txt") == "ustar prefix");
        CHECK(read.contents.at(kVeryLong) == allBytes(513));
        CHECK(read.entries[6].type == TarEntryType::Symlink);
        CHECK(read.entries[6].linkTarget == "hello.txt");
    }
}

TEST_CASE("tar reader refuses damaged and truncated archives", "[run][tar]") {
    std::string archive = sampleArchive();
    SECTION("checksum") {
        archive[10] ^= 0x20;
        CHECK_THROWS_AS(readAll(archive, 512), rossoctl::Error);
    }
    SECTION("truncated inside a file") {
        archive.resize(512 * 6 + 100);
        CHECK_THROWS_AS(readAll(archive, 512), rossoctl::Error);
    }
    SECTION("an empty stream is an empty archive") {
        CHECK(readAll("", 512).entries.empty());
    }
}

TEST_CASE("GNU tar extracts what TarWriter writes", "[run][tar]") {
    rossoctl::testing::TempDir dir;
    const std::string archive = sampleArchive();
    const std::string tarFile = dir.write("a.tar", archive);
    const std::string target = dir.path() + "/x";
    std::filesystem::create_directories(target);
    REQUIRE(std::system(("tar -x -m -f " + tarFile + " -C " + target).c_str()) == 0);
    CHECK(slurp(target + "/out/data.bin") == allBytes(70'001));
    CHECK(slurp(target + "/" + kVeryLong) == allBytes(513));
    CHECK(slurp(target + "/" + kLongDir + "/split.txt") == "ustar prefix");
    CHECK(std::filesystem::read_symlink(target + "/out/link") == "hello.txt");
}

TEST_CASE("TarReader reads GNU tar's gnu and pax formats", "[run][tar]") {
    rossoctl::testing::TempDir dir;
    dir.write("src/" + kVeryLong, allBytes(1000));
    dir.write("src/small.txt", "small");
    for (const std::string format : {"gnu", "pax", "ustar"}) {
        INFO(format);
        const std::string tarFile = dir.file(format + ".tar");
        const std::string members = format == "ustar" ? "./small.txt" : ".";
        REQUIRE(std::system(("tar -c --format=" + format + " -f " + tarFile + " -C " +
                             dir.file("src") + " " + members)
                                .c_str()) == 0);
        const Read read = readAll(slurp(tarFile), 333);
        CHECK(read.contents.at("./small.txt") == "small");
        if (format != "ustar") CHECK(read.contents.at("./" + kVeryLong) == allBytes(1000));
    }
}

namespace {

// A pax header ("x") carrying `records`, then an empty file and the end of the archive.
std::string withPax(const std::string& records) {
    std::string archive;
    TarWriter writer(archive, 0);
    writer.addFile("PaxHeaders/f", records);
    archive[156] = 'x';  // the typeflag; the checksum is recomputed below
    unsigned sum = 0;
    for (size_t i = 0; i < 512; ++i)
        sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(archive[i]);
    std::snprintf(archive.data() + 148, 8, "%06o", sum);
    writer.addFile("f", "");
    writer.finish();
    return archive;
}

// Runs fn in a child process: true if it returned (or threw) within the time, false if it had
// to be killed (a parser that loops forever must fail the test, not hang it).
bool finishesWithin(std::chrono::seconds limit, const std::function<void()>& fn) {
    const pid_t child = ::fork();
    if (child == 0) {
        try {
            fn();
        } catch (...) {
        }
        ::_exit(0);
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(child, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("a pax record with a negative or junk length is a damaged header, not a loop",
          "[run][tar]") {
    for (const std::string records : {"-5 x", "-5 path=a\n", "+9 path=a\n", "0x10 path=a\n",
                                      "99999999999999999999999 path=a\n", "3 a\n", "5 a=b\n"}) {
        INFO(records);
        CHECK(finishesWithin(std::chrono::seconds(5), [&] { readAll(withPax(records), 512); }));
        CHECK_THROWS_AS(readAll(withPax(records), 512), rossoctl::Error);
    }
}

TEST_CASE("a non-numeric pax size is a damaged header, not a stray exception", "[run][tar]") {
    for (const std::string records :
         {"12 size=abc\n", "11 size=-1\n", "29 size=99999999999999999999\n"}) {
        INFO(records);
        CHECK_THROWS_AS(readAll(withPax(records), 512), rossoctl::Error);
    }
}

TEST_CASE("a pax path or linkpath keeps an embedded NUL for the extractor to refuse",
          "[run][tar]") {
    const std::string value = std::string("..\0/x", 5);
    const auto read = readAll(withPax("20 linkpath=" + value + "/y\n"), 512);
    REQUIRE(read.entries.size() == 1);
    CHECK(read.entries[0].linkTarget == value + "/y");
}
