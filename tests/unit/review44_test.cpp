// Review 44: a hostile look at 1f23bd5 (cp and run told the length, stdin never half-closed)
// and 52a1fdb (verify's gzip layers, per-value budget, same-second update). Each case is one
// finding and asserts the honest behaviour; each fails on the code reviewed (hence
// [!mayfail]); a fixed one loses it. The two slow ones (8 s, 60 s) are hidden ([.]); run them
// with "[review44]".
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include "cp_fixtures.hpp"
#include "local_shell.hpp"
#include "pki_fixtures.hpp"
#include "rossoctl/app/copy.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/gzip.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl;
using namespace rossoctl::verify;
using rossoctl::kube::base64Encode;
using rossoctl::testing::TestHost;
namespace verify_fixtures = rossoctl::testing::verify_fixtures;
namespace pki = rossoctl::testing::pki;

namespace {

// ---- sandbox cp - S:FILE ----

app::copy::PodTarget ordersTarget(const TestHost& host, std::chrono::seconds timeout) {
    return {"team1", "orders", "agent", host.clock.monotonic() + timeout};
}

// A pipe whose write end a thread holds open for `open`, after writing `bytes`: a producer
// that has not finished (a terminal, `tail -f`, a slow program).
struct SlowStdin {
    int ends[2] = {-1, -1};
    std::thread writer;
    SlowStdin(std::string bytes, std::chrono::milliseconds before, std::chrono::milliseconds open) {
        REQUIRE(::pipe(ends) == 0);
        writer = std::thread([this, bytes, before, open] {
            std::this_thread::sleep_for(before);
            if (!bytes.empty()) (void)!::write(ends[1], bytes.data(), bytes.size());
            std::this_thread::sleep_for(open);
            ::close(ends[1]);
        });
    }
    ~SlowStdin() {
        writer.join();
        ::close(ends[0]);
    }
};

// Runs copySourceToPod with `descriptor` as stdin: how long it took and what it threw.
struct CopyRun {
    double seconds = 0;
    std::string error;
};
CopyRun copyFromDescriptor(TestHost& host, int descriptor, std::chrono::seconds timeout) {
    kube::ExecIo input;
    input.stdinDescriptor = descriptor;
    const auto start = std::chrono::steady_clock::now();
    CopyRun run;
    try {
        app::copy::copySourceToPod(host.context().client(), ordersTarget(host, timeout),
                                   "/workspace/main.py", std::move(input),
                                   {uint64_t{1} << 30, host.context().cancelFlag()});
    } catch (const std::exception& error) {
        run.error = error.what();
    }
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return run;
}

// ---- sandbox verify ----

const std::string kIssuer = "https://kubernetes.default.svc.cluster.local";

json pod() {
    return verify_fixtures::hardenedPod("uid");
}

Finding tokenBoundary(const json& pod, const std::vector<CredentialSource>& sources = {}) {
    Finding finding = tokenStatic(pod, std::nullopt, std::vector<std::string>{});
    absorb(finding, credentialsStatic(pod, sources, kIssuer, std::nullopt));
    return finding;
}

CredentialSource secret(const std::string& name, const json& plain) {
    json data = json::object();
    for (const auto& [key, value] : plain.items())
        data[key] = base64Encode(value.get<std::string>());
    return {"secret", name,
            json{{"metadata", {{"name", name}}}, {"type", "Opaque"}, {"data", data}}, ""};
}

json mountingSecret(const std::string& name) {
    json mounting = pod();
    mounting["spec"]["volumes"].push_back(
        {{"name", "mounted"}, {"secret", {{"secretName", name}}}});
    return mounting;
}

std::string decodeBase64(const std::string& text) {
    auto decoded = kube::base64Decode(text);
    REQUIRE(decoded);
    return *decoded;
}

std::string evidenceOf(const Finding& finding) {
    std::string lines;
    for (const auto& line : finding.evidence) lines += line + '\n';
    return lines;
}

// gzip -n of a kubeconfig whose user holds a static token:
//   clusters: [{name: c, cluster: {server: https://10.0.0.1:6443}}]
//   users: [{name: u, user: {token: 8f3b1c2e...}}]
// with the CRC-32 of its trailer flipped. `zcat` prints the whole kubeconfig (then "crc
// error", exit 1), as Python's GzipFile.read(n) and Go's gzip.Reader (data, then
// ErrChecksum) give it.
const std::string kKubeconfigGzipBadCrc =
    "H4sIAAAAAAACA4WNQQ7CIBBF93OKuYC2FMQ6W+/gHuigpApNgZ5fGt24Mn/"
    "z819evlnCjdccUiTcBMwhToTXFH24g3vWXBokO"
    "GA0LyZ0gPhdqVXEzOvWOj5KWTJ1neiPewRppSTU/GPXpuzTRy1p5nY6emmFG/hizpPy2vbuxMIMk/"
    "TKajfyPw5vyWcdTsIAAAA=";

// Helm releases (base64 of gzip -n of the release JSON) whose manifest holds a Secret whose
// data.KUBECONFIG_B64 is the kubeconfig above (with a good CRC) base64-encoded once, as the
// chart's Secret keeps any value (kHelmOnce), or twice: a chart value that is itself base64
// (a KUBECONFIG_B64 variable), which the Secret's data encodes again (kHelmTwice).
const std::string kHelmOnce =
    "H4sIAAAAAAACAz2RwW6jMBRFfwUx22ZKUBppkLoINKE0NYgWSGwhjQx2iR1so2DSQtV/"
    "HydTdXvP07lPup+2xILano0bKrV9Y"
    "5/pqWdK2t785or6DtcXrikWc8MFluyN9tpEs9mslL+sVzWcaupZV8OtpqJrsab9bU/rE9W/RyzaUuKOFf/NnnWel/"
    "LIJPGs1+"
    "tJKQXVmGCNvVJa1qX12zY7DhUt5Q/a5v46SOJNFP71lwvPgnu/"
    "K0Qx1m57rrhqCF9vsdsO6EE1qftnQKKVgYh7so8dtH+akkb"
    "pKLw7VLt8GYVgGwU+rx6LiYTFaFgTBaumdouRGGfCfEUeX97rSZ2fp/"
    "X7M18NIFh8JBw68QPYGmdbS7AMmNNUYqNRZvpT4zA+"
    "tI9MvjI+36lc3V5+S0I4Qb7hQOR3MCPHOIQu5D6Pd/kHzJ6OwIUO5IgnYb5APGZgB0aUtYfYTR3EEQMhmKNscwAinRB/"
    "YbEAC"
    "5Sq+1KaVZh8U7b3afca66E32xDatWqkxP76+geWOkcM4wEAAA==";
const std::string kHelmTwice =
    "H4sIAAAAAAACAz2RXW/aMBSG/0qU3ZY1TjckIu0mNIFmIoCT2MGKNJ0QdwR/YIhJoVX/+wKbdmXZj/U+5+j9cDUo7gYu/"
    "Obaug"
    "9uz09de9BugB7uqDOwvXHLQaGBK9DtK+/"
    "s8DQajSr9xckO59OWB8494dFyZSRY3j12fHvi9usVlKw0mJb8TQ6cHlVatLoJnOz+"
    "pdKKW2jAQlBpx7lZ/"
    "6WNxLnmlf6PfhZhNF2m8cvsVzj+FjiU7KbbmFmi5X6hLv5GmZ75+IgLuxvuiArcMxRdlyWBml7Oax8tt"
    "z7e5PsQaGTGud/0TSTnKd21BBV+VjRp5snntTJtFrMxixrKi4mu/SZZe7HevCeUU3zzraBIehbtssZPx/"
    "UTW3BBnvKZCZsCPaf"
    "z3QqkeMsFTrObT132tfD8tS/emJ9YrDGQ2USzOO6ZJ1+INsM8YuAyZDf/"
    "PmwXGnf3fbzJnJaGgWDHnCKSElmwmV1iJK6UmimI7"
    "yUpd4xE5pTnCVvE8kiVWWFUeMO5hAKVeSkH3+WQ7xO8iM3AZYo970IlnkGEbFEaAJmYXKE0jQ2u370flR7abvXrwQ0+"
    "3M6CPXd"
    "D5w038nDljfv5+QdU1MBSOwIAAA==";

// gzip -n -9 of gzip -n of 1 MiB of 'A': 62 bytes that inflate, two layers down, to 1 MiB.
const std::string kNestedGzipMiB =
    "H4sIAAAAAAACA5Pv5mAAASbmtwcNGYGMQwtyXsefEtjnwMgwCkbBKBhpoIbt5L5vjQwMAgwA2pg8qxwEAAA=";

json startedWithEnvFrom(const std::string& secretName, const std::string& startedAt) {
    json started = pod();
    started["spec"]["containers"][0]["env"] =
        json::array({{{"name", "KUBE_TOKEN"},
                      {"valueFrom", {{"secretKeyRef", {{"name", secretName}, {"key", "t"}}}}}}});
    started["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = startedAt;
    return started;
}

// What a scan run in a child process cost (review35b's way): finished in time, verdict code.
struct ChildRun {
    bool finished = false;
    int exitCode = -1;
    double seconds = 0;
};
ChildRun runInChild(const std::function<Verdict()>& scan, std::chrono::seconds limit) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const Verdict verdict = scan();
        _exit(verdict == Verdict::Pass ? 10 : verdict == Verdict::Fail ? 11 : 12);
    }
    ChildRun run;
    int status = 0;
    while (true) {
        if (::waitpid(child, &status, WNOHANG) == child) {
            run.finished = true;
            break;
        }
        if (std::chrono::steady_clock::now() - start > limit) {
            kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run.finished && WIFEXITED(status)) run.exitCode = WEXITSTATUS(status);
    return run;
}

// Runs argv here with `input` as stdin, which then ends (as a cut exec stream does).
std::pair<int, std::string> runHereWithEndingStdin(const std::vector<std::string>& argv,
                                                   const std::string& input) {
    return testing::runHere(argv, input, testing::StdinAfterInput::Ends);
}

}  // namespace

// 1. `cp - S:FILE` now stages all of stdin before the exec, with a blocking read(2) that looks
// at neither the copy's deadline (--timeout) nor Ctrl-C: a stdin that has not ended (a
// terminal, `tail -f x |`, `yes |`) holds rossoctl for as long as it stays open (and fills the
// local disk). Before, the pump polled the descriptor and the exec's deadline/Ctrl-C ended it.
TEST_CASE("review44: cp - S:FILE reads an unfinished stdin past --timeout and Ctrl-C",
          "[review44]") {
    SECTION("--timeout already over") {
        TestHost host;
        serveCpOrders(host);
        auto script = testing::execRan("", "", 0);
        script.readsStdinBytes = 5;
        host.server.onExec("team1", "orders", script);
        // 5 bytes now, then the producer stays open 4 s; the copy's deadline is already here.
        SlowStdin stdinPipe("hello", std::chrono::milliseconds(0), std::chrono::seconds(4));
        const auto run = copyFromDescriptor(host, stdinPipe.ends[0], std::chrono::seconds(0));
        INFO(fmt::format("took {:.1f} s: {}", run.seconds, run.error));
        CHECK(run.seconds < 2);
        CHECK_FALSE(run.error.empty());
    }
    SECTION("Ctrl-C") {
        TestHost host;
        serveCpOrders(host);
        auto script = testing::execRan("", "", 0);
        script.readsStdinBytes = 5;
        host.server.onExec("team1", "orders", script);
        host.cancel.cancel();  // Ctrl-C pressed while stdin is still open
        SlowStdin stdinPipe("hello", std::chrono::milliseconds(0), std::chrono::seconds(4));
        const auto run = copyFromDescriptor(host, stdinPipe.ends[0], std::chrono::minutes(30));
        INFO(fmt::format("took {:.1f} s: {}", run.seconds, run.error));
        CHECK(run.seconds < 2);
        CHECK_FALSE(run.error.empty());
    }
}

// 2. The staging read is a bare read(2): a stdin left non-blocking (O_NONBLOCK, as Node's
// child_process and some CI runners leave a pipe) gives EAGAIN before the producer writes, and
// the copy fails "cannot read stdin: Resource temporarily unavailable". Before, the pump polled
// the descriptor and took EAGAIN as "not yet" (exec.cpp readDescriptor).
TEST_CASE("review44: cp - S:FILE fails on a non-blocking stdin that is not ready yet",
          "[review44]") {
    TestHost host;
    serveCpOrders(host);
    auto script = testing::execRan("", "", 0);
    script.readsStdinBytes = 5;
    host.server.onExec("team1", "orders", script);
    SlowStdin stdinPipe("hello", std::chrono::milliseconds(300), std::chrono::milliseconds(0));
    REQUIRE(::fcntl(stdinPipe.ends[0], F_SETFL, ::fcntl(stdinPipe.ends[0], F_GETFL) | O_NONBLOCK) ==
            0);
    const auto run = copyFromDescriptor(host, stdinPipe.ends[0], std::chrono::minutes(30));
    INFO(run.error);
    CHECK(run.error.empty());
    REQUIRE(host.server.execs.size() == 1);
    CHECK(*host.server.execs[0].stdinText == "hello");
}

// 3. The run wrapper takes WORKDIR/.rossoctl-stdin as the command's stdin and deletes it
// whether or not rossoctl uploaded it (no --stdin): a file of that name the user uploaded with
// --file, or that the image or a reused pool pod's volume holds, silently becomes stdin and
// is removed ("nothing rossoctl did not create is deleted").
TEST_CASE("review44: run without --stdin deletes a .rossoctl-stdin it did not upload",
          "[review44]") {
    testing::TempDir workdir;
    {
        std::ofstream mine(workdir.file(".rossoctl-stdin"));
        mine << "the user's own file\n";
    }
    auto argv =
        app::run::runCommandLine(workdir.path(), {"sh", "-c", "read -r line; echo \"$line\""});
    const auto [status, out] = testing::runHereWithOpenStdin(argv, "from the exec\n");
    CHECK(status == 0);
    CHECK(out == "from the exec\n");
    CHECK(std::filesystem::exists(workdir.file(".rossoctl-stdin")));
}

// 4. gunzip drops what the inflate call that met an error produced, and returns nothing when
// that was all of it: a kubeconfig gzip-compressed with a wrong CRC-32 is no form at all, not
// even a partial one, so verify passes what `zcat` prints whole (exit 1 after the text).
TEST_CASE("review44: a gzip-compressed kubeconfig whose CRC is wrong passes", "[review44]") {
    std::string bad = decodeBase64(kKubeconfigGzipBadCrc);
    // Control: the same stream with its CRC put right is found.
    std::string good = bad;
    good[good.size() - 8] = static_cast<char>(good[good.size() - 8] ^ 0xff);
    REQUIRE(
        tokenBoundary(mountingSecret("cfg"), {secret("cfg", {{"kubeconfig.gz", good}})}).verdict ==
        Verdict::Fail);
    const Finding finding =
        tokenBoundary(mountingSecret("cfg"), {secret("cfg", {{"kubeconfig.gz", bad}})});
    INFO(evidenceOf(finding));
    CHECK(finding.verdict != Verdict::Pass);
}

// 5. The Helm driver's base64 is counted as one of the two base64/hex layers, so a chart
// Secret whose value is itself base64 (KUBECONFIG_B64, which the Secret's data encodes again)
// is past the depth read: the motivating case of 52a1fdb, one encoding deeper, passes.
TEST_CASE("review44: a Helm release whose Secret keeps a base64 kubeconfig passes", "[review44]") {
    // Control: the chart's Secret holding the kubeconfig itself is found.
    REQUIRE(tokenBoundary(mountingSecret("sh.helm.release.v1.agent.v1"),
                          {secret("sh.helm.release.v1.agent.v1", {{"release", kHelmOnce}})})
                .verdict == Verdict::Fail);
    const Finding finding =
        tokenBoundary(mountingSecret("sh.helm.release.v1.agent.v1"),
                      {secret("sh.helm.release.v1.agent.v1", {{"release", kHelmTwice}})});
    INFO(evidenceOf(finding));
    CHECK(finding.verdict == Verdict::Fail);
}

// 6. lastWritten sets `updated` only when an entry is later than one seen before it: without
// a creationTimestamp the first managedFields entry is taken as the creation, so an update in
// the second the container started passes when it is listed first, and is unproven when
// listed second. (A hostile or stripped answer; and with neither a creationTimestamp nor
// managedFields nothing is asked at all.)
TEST_CASE("review44: without a creationTimestamp the same-second update depends on order",
          "[review44]") {
    const json started = startedWithEnvFrom("deploy", "2023-11-15T10:00:00Z");
    const json rotator = {{"manager", "rotator"}, {"time", "2023-11-15T10:00:00Z"}};
    const json creator = {{"manager", "kubectl-create"}, {"time", "2023-11-14T09:00:00Z"}};
    auto rewritten = [&](const json& managedFields) {
        CredentialSource source = secret("deploy", {{"t", "harmless"}});
        (*source.object)["metadata"] = {{"name", "deploy"}};
        if (!managedFields.is_null()) (*source.object)["metadata"]["managedFields"] = managedFields;
        return source;
    };
    // Control: creator listed first, the update is unproven.
    REQUIRE(tokenBoundary(started, {rewritten(json::array({creator, rotator}))}).verdict ==
            Verdict::Unproven);
    const Finding updateFirst =
        tokenBoundary(started, {rewritten(json::array({rotator, creator}))});
    INFO(evidenceOf(updateFirst));
    CHECK(updateFirst.verdict != Verdict::Pass);
    const Finding noTimes = tokenBoundary(started, {rewritten(json())});
    INFO(evidenceOf(noTimes));
    CHECK(noTimes.verdict != Verdict::Pass);
}

// 7. Created in the second the container started and rewritten by a second manager in that
// same second: two managers are two writes, one of them not the creation, and it may be after
// the start; `updated` needs a later second than the creation, so it passes.
TEST_CASE("review44: a second manager's write in the creation's and start's second passes",
          "[review44]") {
    const json started = startedWithEnvFrom("deploy", "2023-11-15T10:00:00Z");
    CredentialSource rewritten = secret("deploy", {{"t", "harmless"}});
    (*rewritten.object)["metadata"] = {
        {"name", "deploy"},
        {"creationTimestamp", "2023-11-15T10:00:00Z"},
        {"managedFields",
         {{{"manager", "kubectl-create"},
           {"operation", "Update"},
           {"time", "2023-11-15T10:00:00Z"}},
          {{"manager", "rotator"}, {"operation", "Update"}, {"time", "2023-11-15T10:00:00Z"}}}}};
    const Finding finding = tokenBoundary(started, {rewritten});
    INFO(evidenceOf(finding));
    CHECK(finding.verdict != Verdict::Pass);
}

// 8. The 8 MiB inflation budget is per value, and nothing bounds it across values: 62 bytes
// inflate (two gzip layers) to 1 MiB, so a 1.5 KiB value costs 8 MiB of inflating and
// scanning, three walks over (holdsPrivateKey, credentialShape, the key scan): 0.43 s of CPU
// a value here. 200 such values are one 136 KiB Secret (~90 s); a 1 MiB Secret ~10 min, and
// 256 Secrets of 32 MiB in all are read (hours).
TEST_CASE("review44: many small values each inflate the whole per-value budget", "[review44]") {
    std::string value;
    for (int i = 0; i < 8; ++i) value += kNestedGzipMiB + ' ';
    json keys = json::object();
    for (int i = 0; i < 200; ++i) keys["part" + std::to_string(i)] = value;
    const auto run = runInChild(
        [&] {
            return credentialsStatic(mountingSecret("parts"), {secret("parts", keys)}, kIssuer,
                                     pki::kClusterCa)
                .verdict;
        },
        std::chrono::seconds(60));
    INFO(fmt::format("finished {} after {:.1f} s, exit {}", run.finished, run.seconds,
                     run.exitCode));
    CHECK(run.finished);
    CHECK(run.seconds < 30);
    CHECK(run.exitCode != 10);  // never a pass: each value's walk ran out of its budget
}

// 9. A gzip stream past the budget is a partial form (unproven), but one past the two gzip
// layers is plain bytes and nothing says it was not read: gzip -n three times over the
// kubeconfig above (`zcat | zcat | zcat` reads it) passes.
TEST_CASE("review44: a kubeconfig behind a third gzip layer passes, unread and unflagged",
          "[review44]") {
    const std::string thrice = decodeBase64(
        "H4sIAAAAAAACA5Pv5mAAASZmxkkMuf/l4dzWXke+QwoCrt+Lu3Y2bBM5YhX9/oHciwVLuHwb58VL3d1hVP/"
        "5c3zcvshD"
        "vddlglTusJxR9Gu5LlK7o7n6WoyUikWCib5aScOP2JWhR868vmZl5xVpVDr3RX81S+ZSlSt/"
        "kq8ve3PZXTfzWZlVVWar9I"
        "+kc5M/3fr27sghnslfTmWZf7LnyzdLl/U7BHTJ5CiX/5OANAC9BybyqQAAAA==");
    // Control: two layers in (what the first inflation gives) it is found.
    const auto twice = kube::gunzip(thrice, 1 << 20);
    REQUIRE(twice);
    REQUIRE(tokenBoundary(mountingSecret("cfg"), {secret("cfg", {{"k.gz.gz", twice->bytes}})})
                .verdict == Verdict::Fail);
    const Finding finding =
        tokenBoundary(mountingSecret("cfg"), {secret("cfg", {{"k.gz.gz.gz", thrice}})});
    INFO(evidenceOf(finding));
    CHECK(finding.verdict != Verdict::Pass);
}

// 10. cp checks the length it wrote (wc -c); run did not: `head -c N | tar -x` exits 0 when
// stdin ends early (head takes a short input as the end, GNU and busybox tar take an archive
// cut at a header as whole), so a stream the node cuts short, the very failure 1f23bd5 is
// about, ran the command without its --stdin or --file files. Now the upload's last entry is
// a random end marker the wrapper must find (run_pod_test has the --file case).
TEST_CASE("review44: run's upload cut short at a header runs the command without its stdin",
          "[review44]") {
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addFile(app::run::kEnvFileName, "export GREETING='hi'\n", 0600);
    const size_t cut = archive.size();  // the env file whole, then the stream ends
    writer.addFile(app::run::kStdinFileName, "the code's input\n", 0600);
    const auto upload = app::run::endUpload(writer, archive, app::run::uploadEndMarker(7, 9));
    testing::TempDir workdir;
    const auto argv = app::run::uploadAndRunCommandLine(
        workdir.path(), {"sh", "-c", "echo \"$GREETING:$(cat)\""}, upload, /*stdinFile=*/true,
        /*envFile=*/true);
    // Control: the whole archive gives the command its stdin.
    REQUIRE(runHereWithEndingStdin(argv, archive) ==
            std::pair<int, std::string>{0, "hi:the code's input\n"});
    testing::TempDir again;
    const auto cutArgv = app::run::uploadAndRunCommandLine(
        again.path(), {"sh", "-c", "echo \"$GREETING:$(cat)\""}, upload, /*stdinFile=*/true,
        /*envFile=*/true);
    const auto [status, out] = runHereWithEndingStdin(cutArgv, archive.substr(0, cut));
    INFO(out);
    CHECK(status == 125);  // the upload was not whole: the code must not run
}

// 11. 1f23bd5 stops half-closing stdin for cp without tar, since containerd can drop the bytes
// in flight on a half-close (containerd#12734); cp with tar, the path every image with tar
// takes, still streams into `tar xf -` and half-closes, with no length told or checked. tar
// exits 0 on an archive cut at a header: cp says "copied 2 files" and one is missing.
TEST_CASE("review44: cp to a pod with tar still half-closes and takes a cut archive as whole",
          "[review44]") {
    testing::TempDir dir;
    dir.write("data/a.txt", std::string(700, 'a'));
    dir.write("data/b.txt", "bravo");
    TestHost host;
    serveCpOrders(host);
    host.server.onExec("team1", "orders", testing::execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", testing::execRan("", "", 0));
    REQUIRE(host.run({"sandbox", "cp", dir.file("data"), "orders:/workspace"}) == 0);
    REQUIRE(host.server.execs.size() == 2);
    CHECK_FALSE(*host.server.execs[1].stdinHalfClosed);
    // The same command line here, its stream cut at the last file's header.
    const std::string stream = *host.server.execs[1].stdinText;
    size_t cut = 0;
    for (size_t at = 0; at + 512 <= stream.size(); at += 512)
        if (stream.compare(at, 7, "./a.txt") == 0 || stream.compare(at, 7, "./b.txt") == 0)
            cut = at;
    REQUIRE(cut > 0);
    testing::TempDir pod;
    auto argv = host.server.execs[1].command;
    argv.at(4) = pod.file("data");
    const auto [status, out] = runHereWithEndingStdin(argv, stream.substr(0, cut));
    INFO(out);
    CHECK(status != 0);  // one of the two files is missing: not a whole copy
}
