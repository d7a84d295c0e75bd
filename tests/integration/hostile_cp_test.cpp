// sandbox cp against a real pod that attacks the machine running rossoctl. The image is the
// pod's, so the pod decides what `sh` and `tar` are: here a sandbox whose PATH starts with
// /workspace/bin, where the pod puts its own sh. It answers rossoctl's probe, tar and listing
// scripts with what an attacker would send (a tar built by python3's tarfile, floods of
// /dev/zero) and runs everything else with the real /bin/sh.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace {

constexpr const char* kHostileSh = R"sh(#!/bin/sh
mode=$(/bin/cat /workspace/mode 2>/dev/null)
case "$2" in
*"command -v tar"*)
  case "$mode" in
    flood) printf 'f - tar\n'; exec /bin/cat /dev/zero ;;
    notar) printf 'd - none\n'; exit 0 ;;
    *) printf 'f - tar\n'; exit 0 ;;
  esac ;;
*"exec tar cf"*) exec python3 /workspace/bin/evil.py "$mode" ;;
*"walk()"*) exec head -c 67108864 /dev/zero ;;
*"tar xf -"*) [ "$mode" = stall ] && exec /bin/sleep 600 ;;
esac
exec /bin/sh "$@"
)sh";

// In mode stall, the tar that takes an upload never reads its stdin (nor exits).
// The tar streams: the copied file replaced by a link to a key it also sent; a GNU long name
// over PATH_MAX; pax headers far larger than the files they describe.
constexpr const char* kEvilPy = R"py(import io, sys, tarfile
mode = sys.argv[1]
def add(tar, name, data=b"", **kw):
    info = tarfile.TarInfo(name); info.size = len(data)
    for k, v in kw.items(): setattr(info, k, v)
    tar.addfile(info, io.BytesIO(data) if data else None)
fmt = tarfile.PAX_FORMAT if mode == "pax" else tarfile.GNU_FORMAT
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=fmt) as tar:
    if mode == "swap":
        add(tar, "./report.pdf", b"%PDF")
        add(tar, "./.ssh", type=tarfile.DIRTYPE, mode=0o700)
        add(tar, "./.ssh/id_rsa", b"pod's decoy")
        add(tar, "./report.pdf", type=tarfile.SYMTYPE, linkname=".ssh/id_rsa")
    elif mode == "longname":
        add(tar, "./" + "n" * 5000, b"x")
    elif mode == "pax":
        for i in range(300):
            add(tar, "./f%d" % i, b"x", pax_headers={"comment": "c" * 60000})
)py";

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void setMode(const std::string& ns, const std::string& mode) {
    auto result = harness::rossoctl({"sandbox", "exec", "hostile", "-n", ns, "--", "/bin/sh", "-c",
                                     "printf '%s' \"$1\" > /workspace/mode", "sh", mode});
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
}

// A project with one sandbox whose sh is the pod's own.
void hostileSandbox(const std::string& ns) {
    auto project = harness::rossoctl({"project", "create", ns, "--no-check"});
    INFO(project.out << project.err);
    REQUIRE(project.exitCode == 0);
    auto created =
        harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                           "--name", "hostile", "--containerImage", "python:3.12-slim", "--envVar",
                           "PATH=/workspace/bin:/usr/local/bin:/usr/bin:/bin", "-n", ns});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    auto ready = harness::rossoctl({"agents", "wait", "hostile", "-n", ns, "--timeout", "180s"});
    INFO(ready.out << ready.err);
    REQUIRE(ready.exitCode == 0);
    auto planted = harness::rossoctl(
        {"sandbox", "exec", "hostile", "-n", ns, "--", "/bin/sh", "-c",
         "mkdir -p /workspace/bin && printf '%s' \"$1\" > /workspace/bin/sh && "
         "printf '%s' \"$2\" > /workspace/bin/evil.py && chmod 755 /workspace/bin/sh",
         "sh", kHostileSh, kEvilPy});
    INFO(planted.err);
    REQUIRE(planted.exitCode == 0);
}

// rossoctl under /usr/bin/time: its peak RSS in MiB, and the result.
struct Measured {
    harness::RunResult result;
    long peakMiB = 0;
    double seconds = 0;
};

Measured measuredCp(const std::string& ns, const std::string& from, const std::string& to,
                    const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        "/usr/bin/time", "-v", harness::rossoctlBinary(), "sandbox", "cp", from, to, "-n", ns};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto start = std::chrono::steady_clock::now();
    Measured measured;
    measured.result = harness::run(argv, {}, {{"KUBECONFIG", harness::kubeconfigPath()}}, 170);
    measured.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::smatch rss;
    if (std::regex_search(measured.result.err, rss,
                          std::regex("Maximum resident set size \\(kbytes\\): ([0-9]+)")))
        measured.peakMiB = std::stol(rss[1]) / 1024;
    std::cout << "hostile cp " << from << ": exit " << measured.result.exitCode << ", peak RSS "
              << measured.peakMiB << " MiB, " << measured.seconds << " s\n";
    return measured;
}

}  // namespace

TEST_CASE("a pod's own sh and tar cannot reach the user's files, memory or time through cp",
          "[hostile][cp]") {
    harness::TestNamespace guard("hostile29-cp", /*create=*/false);
    const std::string ns = guard.name();
    hostileSandbox(ns);
    const fs::path local = fs::temp_directory_path() / ("rossoctl-" + ns);
    fs::create_directories(local / ".ssh");
    std::ofstream(local / ".ssh/id_rsa") << "the user's own key";

    // a single file the tar turns into a link to a key lands nothing
    setMode(ns, "swap");
    auto copied = measuredCp(ns, "hostile:/workspace/report.pdf", (local / "report.pdf").string());
    INFO(copied.result.err);
    CHECK(copied.result.exitCode == 1);
    CHECK_THAT(copied.result.err, Catch::Contains("as a symlink or something else"));
    CHECK_FALSE(fs::exists(fs::symlink_status(local / "report.pdf")));
    CHECK(slurp(local / ".ssh/id_rsa") == "the user's own key");
    // a path probe that floods is cut at its cap, in little memory
    setMode(ns, "flood");
    auto probed = measuredCp(ns, "hostile:/workspace/a", (local / "a").string());
    INFO(probed.result.err);
    CHECK(probed.result.exitCode == 1);
    CHECK_THAT(probed.result.err, Catch::Contains("printed more than 4096 bytes"));
    CHECK(probed.peakMiB < 200);
    CHECK(probed.seconds < 60);
    // a long name over PATH_MAX and oversized pax headers are refused, not held
    setMode(ns, "longname");
    auto named = measuredCp(ns, "hostile:/workspace/report.pdf", (local / "r1").string());
    INFO(named.result.err);
    CHECK(named.result.exitCode == 1);
    CHECK_THAT(named.result.err, Catch::Contains("refused"));
    CHECK(named.result.err.size() < 4096);
    setMode(ns, "pax");
    auto padded = measuredCp(ns, "hostile:/workspace/report.pdf", (local / "r2").string(),
                             {"--max-bytes", "1Ki"});
    INFO(padded.result.err);
    CHECK(padded.result.exitCode == 1);
    CHECK_THAT(padded.result.err, Catch::Contains("metadata headers"));
    CHECK(padded.peakMiB < 200);
    // a listing of 64 MiB of NUL bytes stops at its first record
    setMode(ns, "notar");
    auto listed = measuredCp(ns, "hostile:/workspace", (local / "tree").string());
    INFO(listed.result.err);
    CHECK(listed.result.exitCode == 1);
    CHECK_THAT(listed.result.err, Catch::Contains("listing is damaged"));
    CHECK(listed.peakMiB < 200);
    std::error_code ignored;
    fs::remove_all(local, ignored);
}

TEST_CASE("an upload whose tar never reads its stdin still ends at cp's --timeout",
          "[hostile][cp][stall]") {
    harness::TestNamespace guard("hostile29b-stall", /*create=*/false);
    const std::string ns = guard.name();
    hostileSandbox(ns);
    setMode(ns, "stall");
    // Far more than every buffer between rossoctl and the pod's stdin pipe holds.
    const fs::path big = fs::temp_directory_path() / ("rossoctl-" + ns + ".bin");
    std::ofstream(big).close();
    fs::resize_file(big, 256u << 20);
    auto stalled = measuredCp(ns, big.string(), "hostile:/workspace/big.bin", {"--timeout", "20s"});
    INFO(stalled.result.err);
    CHECK(stalled.result.exitCode == 1);
    CHECK_THAT(stalled.result.err, Catch::Contains("did not finish within the copy's --timeout"));
    CHECK(stalled.seconds < 60);
    std::error_code ignored;
    fs::remove(big, ignored);
}
