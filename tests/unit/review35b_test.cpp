// Review 35b: a hostile look at sandbox verify's token boundary after review 35's changes.
// Each case is one finding and asserts the honest verdict; each fails on the code reviewed
// (hence [!mayfail]); a fixed one loses it. Slow ones are hidden ([.]); run them with
// "[review35b]".
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "pki_fixtures.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/gzip.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;
using rossoctl::kube::base64Encode;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

const std::string kIssuer = "https://kubernetes.default.svc.cluster.local";

std::string clusterToken() {
    return verify_fixtures::jwt({{"iss", kIssuer},
                                 {"sub", "system:serviceaccount:team1:agent-bot"},
                                 {"kubernetes.io", {{"namespace", "team1"}}}});
}

json pod() {
    return verify_fixtures::hardenedPod("uid");
}

Finding tokenBoundary(const json& pod, const std::vector<CredentialSource>& sources = {},
                      const std::optional<std::string>& authorities = std::nullopt) {
    Finding finding = tokenStatic(pod, std::nullopt, std::vector<std::string>{});
    absorb(finding, credentialsStatic(pod, sources, kIssuer, authorities));
    return finding;
}

CredentialSource secret(const std::string& name, const json& plain,
                        const std::string& type = "Opaque") {
    json data = json::object();
    for (const auto& [key, value] : plain.items())
        data[key] = base64Encode(value.get<std::string>());
    return {"secret", name, json{{"metadata", {{"name", name}}}, {"type", type}, {"data", data}},
            ""};
}

json withVolume(json pod, const json& volume) {
    pod["spec"]["volumes"].push_back(volume);
    return pod;
}

json withEnv(json pod, const json& env) {
    pod["spec"]["containers"][0]["env"] = env;
    return pod;
}

json mountingSecret(const std::string& name) {
    return withVolume(pod(), {{"name", "mounted"}, {"secret", {{"secretName", name}}}});
}

std::string decodeBase64(const std::string& text) {
    auto decoded = rossoctl::kube::base64Decode(text);
    REQUIRE(decoded);
    return *decoded;
}

std::string evidenceOf(const Finding& finding) {
    std::string lines;
    for (const auto& line : finding.evidence) lines += line + '\n';
    return lines;
}

// What a scan run in a child process cost: whether it ended within the time given, its verdict
// (exit code 10 + verdict) and its peak memory.
struct ChildRun {
    bool finished = false;
    int exitCode = -1;
    double seconds = 0;
    long peakKiB = 0;
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
    struct rusage usage {};
    while (true) {
        const pid_t done = wait4(child, &status, WNOHANG, &usage);
        if (done == child) {
            run.finished = true;
            break;
        }
        if (std::chrono::steady_clock::now() - start > limit) {
            kill(child, SIGKILL);
            wait4(child, &status, 0, &usage);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.peakKiB = usage.ru_maxrss;
    if (run.finished && WIFEXITED(status)) run.exitCode = WEXITSTATUS(status);
    return run;
}

const std::string kStaticToken = "8f3b1c2e9a7d4f6b0c5e1a2d3f4b6c8e8f3b1c2e9a7d4f6b0c5e1a2d3f4b6c8e";

// gzip -n of "# notes on the cluster\n", then (a second member, as `cat a.gz b.gz` and pigz
// write) gzip -n of a kubeconfig (as verify_credential_sources_test's kubeconfigWith
// writes it) whose user holds `token: ` + kStaticToken.
const std::string kTwoMemberGzip =
    "H4sIAAAAAAACA1NWyMsvSS1WyM9TKMlIVUjOKS0uSS3iAgDjUFzlFwAAAB+LCAAAAAAAAgOFjbEOwjAQQ/"
    "f7ilN3aNOEUm7l"
    "H1gQQ5peICokVZNWSIh/J5VYmJAHW8+yrEd34im64AkXAYPzPeExeOuuYO5zTLkk2KDXDyY0gPilhK/"
    "I07KG4pbSGKksRbVd"
    "JahRShZvmOPPes7rFVF2xBQGzqetlZ0wNR/0vle26SqzY6HrXlrVNablfz2Y4BM/UyQ8X+ADt1TFys8AAAA=";

// A Helm release (base64 of gzip -n of its JSON) whose manifest holds a Secret whose
// data.kubeconfig is base64 of that kubeconfig.
const std::string kHelmReleaseWithSecret =
    "H4sIAAAAAAACAz2PUXOiMBDHv0qGez1byKi98qb2RGqDQ4soGV5CSGNiEhgJttC5735gZ/q2+9v//"
    "Hb3yzFEM8cHDuHMWOc3"
    "cK7s0ojKDMwbunHc1ITeMpYR7Y0ZTYx4Z40d4WQyyc0v8Fa1F8p8cPPcW6ZrRSxr7htGL8zedUSr3JBapN96H1y93JyFKX"
    "3w"
    "dovkRjNLSmKJnxsAxsU+oKptLLvk5oef24LRyrwL7oPsuKxTnXYUqmshK17Kv1sCVYufKh7DxxZrZVY6aspj5OLjc7/"
    "jlQ2D"
    "2ak47OdhgLbhaimLTdqXQdrtxPKBwrQr9VgvBNm8unSD5i/dn0+0mn68yEWLkgpGT3EfGnc7OBU1aL4SLi/"
    "02uJk2B9XPBx8"
    "+BgOfMEHv1tAq8bbdkHWZ3Itkd7PsqQ8R0EGM7mU0WH/"
    "mSXPZwQzN5NY7oL9FMtIoAPqcKJOEYxdLLFAAfJwsj4hHfdYvopI"
    "oymOa1nA2fDbyaV9xQ+eu82N8+8/2bg/5NYBAAA=";

// openssl pkcs12 -export -nokeys -in the cluster CA -passout pass: (a truststore: no key).
const std::string kTruststorePkcs12 =
    "MIICxwIBAzCCAn0GCSqGSIb3DQEHAaCCAm4EggJqMIICZjCCAmIGCSqGSIb3DQEHBqCCAlMwggJPAgEAMIICSAYJKoZIhv"
    "cN"
    "AQcBMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAj0m7vRWQDwYAICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQ"
    "ME"
    "ASoEENLKQDgcV5xK64ksA1DotSGAggHgC03Mbz/vLLafXOdxqKyS+iZbe3Pn3sfmmUIlcJazGmVeis//"
    "sUDD4FC2vl1AjFUI"
    "th8x4lbvi9YXCtqHIvmbbdrab6D9wiUHhjGCQgdk+sesHVTfe2KI1MhCBLq0yKc+"
    "DevpVaeTAbgFb6lDGoLy3w3XbYRNmI7X"
    "BrtCdUKfTWtTU9ykPBMMErldH2sLgnXRB1ASM4PaC9S2vtF7h3kuIJKveesNrnUCgavX4F/UeuYQL/SweWKxBqaqRnrmC/"
    "fx"
    "JCJCfrQH+JPOF1pZZ6LCxgOJd8sAvR+f2aPXthcQBBnPP1554Sen+NOEGanSqI8r2QJ1xZ/"
    "NJyRGykZUyaHajXWLLaqXPDhJ"
    "DaJRrQ0+e4qu7WXCwxohSokG/"
    "AYEW+bBMNhZlx9tepRYUOz8r+2gusA5Fxtmauc9lIyfUImbjpvfgocBlK9mtU0L4byIQ2Vx"
    "NZWYQppsxk72/"
    "HBr+3GxCVpKiiRSTQeVSp08cj1yDY39ZS+1wq4NV+UAN9aGWgg4UX2KF+qllzUO2hGqQkoLIpJ7IqAMwQxO"
    "Y5wVFGbcwZ3S/a+KRJEocLqQOUhhFQD8T8q3Sq9AuOQ2dktKnrF+9W6Q0AgBXr1buCJMVTTJCC9GzhY53eO0MyoB4DH/"
    "o4Id"
    "MEEwMTANBglghkgBZQMEAgEFAAQgITbFZjoaLb0Rt/ZQPOdBRA1uhoDui9tOlQ8tStsUkoAECECmHPQKnR6nAgIIAA==";

// gzip -9 of 1 MiB of the character '0' (0x30, which verify's key scan takes for DER), base64:
// 1,404 characters that inflate to 1 MiB.
std::string gzippedZeroCharacters() {
    return "H4sIAAAAAAACA+3BMQEAAADCoErrn84QvkAB" + std::string(1353, 'A') + "HwG2nWmNwAAEAA=";
}

// A PKCS#12 store (the fixtures' leaf key and certificate, openssl pkcs12 -export -passout
// pass:) whose MacData iteration count was rewritten to 2^31-1: the MAC no longer verifies, but
// OpenSSL derives the MAC key (2^31-1 rounds of SHA-256) to find that out.
std::string pkcs12WithHugeMacIterations() {
    return decodeBase64(
        "MIIEUAIBAzCCBAQGCSqGSIb3DQEHAaCCA/"
        "UEggPxMIID7TCCAqMGCSqGSIb3DQEHBqCCApQwggKQAgEAMIICiQYJKoZI"
        "hvcNAQcBMFgGCSqGSIb3DQEFDTBLMCoGCSqGSIb3DQEFDDAdBAibDZ/gVuhD/"
        "gIDAQAAMAwGCCqGSIb3DQIJBQAwHQYJ"
        "YIZIAWUDBAEqBBBxWxTpAdyGZcPu0MlCIfmZgIICIOoz0nSCJ4ZgB1eXUWD2kM3QF1vYgFAcwrBYVShfQUkB9Q6Rok"
        "e6"
        "/frr5XgabnLLvx7rpSDHFHENMoNfHxeW1B9uXr3NlaFkjEacTO3iOuBymYyQe3EW9+/"
        "Dzu5CR6tiQwbdIEtVpjuX9Zoc"
        "2LcWTyKkSY/fyL+MZshz86sTMJiVoAOIQvuWt9VH/Whk6zSKY/"
        "6bAQCaI3bhNzSq+yeMX84A6aIc3nJ8naZh3IdsAFz0"
        "OGacQ7OGhib4cmCu6PJW3Cxg5cDA9rUCAPSGOmCJMXGTIwdnwynwDJqIiv9V+dpI3HLdwEnq2m2ztUeCPa3YM0/"
        "22sug"
        "skYnrxWIUtQM6PCTGvNEdurI9jyR7SfTpAlR9n2EWzaJI6SBhQx0sIY/5aazXfdJbe4oReXQFGYpH2DTp6m/"
        "eCWXwbX5"
        "43s4XCTXhnQAiNT+oxe1J/E2ltKIBqYyp3YZPzfHB27wj0rMwV3Ld0Dz1bw0kJ0zBfg/SGvh/"
        "yP0lVlrsWYckbNy0Bkj"
        "9tRhR/JUPxDLw6q21YwD2ShgtxNzAWBsx/"
        "qChvjogHNVHomqTkO9UBKN6MEba5E1sdDYiKPp1fmiXrNVMAkUWbQvhtQT"
        "h7VQT539FkBaIJU5g79FzZ4HeVZBVIeEACmDq4raiGtdsms+HclVwbGKl2bpQhq8tU4yZGOMOTZ6HFRb/"
        "RrR+N7pbaq6"
        "hSkii+"
        "8keKF83yZ5tfkdjHJoGKnMdXwwggFCBgkqhkiG9w0BBwGgggEzBIIBLzCCASswggEnBgsqhkiG9w0BDAoBAqCB"
        "8DCB7TBYBgkqhkiG9w0BBQ0wSzAqBgkqhkiG9w0BBQwwHQQIMFYiG8vYd4QCAwEAADAMBggqhkiG9w0CCQUAMB0GCW"
        "CG"
        "SAFlAwQBKgQQbVp4j6r+zo+20ho+Nt0GOwSBkDI61cBJ1LGwcUXTfSrdE+"
        "NPq78oBBnjcfMoFiQkotz3eYy2t7AsHjXR"
        "eVqD2xuT0RLRO4AnRrd5m52KI2T9WKkoDFvdYm2SUbn2NkMCABK/oT2C0IJ/"
        "q7dWgLTWGm7FvtNkCs4ozZiVm1ej6l6J"
        "7ZhuEyuoIslZSdMJ2GGXpxirTDi0Ot8/"
        "2MPvGe4SCxe3jzElMCMGCSqGSIb3DQEJFTEWBBTgXEpmEknU6pnwfUpmyXm8"
        "LaF/UTBDMDEwDQYJYIZIAWUDBAIBBQAEIMX/XJ1c+GjYR1frgjvAm9K69Fvsy9NZ4k4ZWfAeW/"
        "t6BAhSMdiFyVwSgQIE"
        "f////w==");
}

}  // namespace

// 1. The kubelet's expansion maps $(NAME) to every env value defined before it, fieldRef ones
// included (and the service links); verify's map holds literals and Secret/ConfigMap keys only.
TEST_CASE("review35b: a token the kubelet assembles from a downward-API env value", "[review35b]") {
    // The annotation holds header.claims (no second dot: no JWT by shape); TOKEN adds the
    // signature. The running container's TOKEN is the whole service-account token.
    const std::string token = clusterToken();
    const size_t lastDot = token.rfind('.');
    json assembled = pod();
    assembled["metadata"]["annotations"] = {{"build-id", token.substr(0, lastDot)}};
    assembled = withEnv(
        assembled,
        json::array(
            {{{"name", "PART"},
              {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.annotations['build-id']"}}}}}},
             {{"name", "TOKEN"}, {"value", "$(PART)" + token.substr(lastDot)}}}));
    // Control: PART written as a literal, the same expansion is found.
    json literal = assembled;
    literal["spec"]["containers"][0]["env"][0] = {{"name", "PART"},
                                                  {"value", token.substr(0, lastDot)}};
    REQUIRE(tokenBoundary(literal).verdict == Verdict::Fail);
    const Finding finding = tokenBoundary(assembled);
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict == Verdict::Fail);
}

// 2. Expanding stops silently after 4 MiB of values, counted over every env entry; the kubelet
// keeps one value per name, so forty entries of one name cost the process one value.
TEST_CASE(
    "review35b: env entries repeating one name spend the expansion budget; what follows "
    "is never expanded",
    "[review35b]") {
    const std::string token = clusterToken();
    const size_t half = token.find('.') + 12;
    const json env = json::array(
        {{{"name", "BIG"}, {"valueFrom", {{"secretKeyRef", {{"name", "pad"}, {"key", "big"}}}}}}});
    const auto pad = secret("pad", {{"big", std::string(120 * 1024, 'x')}});
    auto padded = [&](int entries) {
        json all = env;
        for (int i = 0; i < entries; ++i) all.push_back({{"name", "PAD"}, {"value", "$(BIG)"}});
        all.push_back({{"name", "HEAD"}, {"value", token.substr(0, half)}});
        all.push_back({{"name", "TAIL"}, {"value", token.substr(half)}});
        all.push_back({{"name", "FULL"}, {"value", "$(HEAD)$(TAIL)"}});
        return withEnv(pod(), all);
    };
    // Control: with 30 entries (3.5 MiB expanded) the token is found.
    REQUIRE(tokenBoundary(padded(30), {pad}).verdict == Verdict::Fail);
    // The process holds BIG, PAD (120 KiB each), HEAD, TAIL and FULL: far under ARG_MAX.
    const Finding finding = tokenBoundary(padded(40), {pad});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict == Verdict::Fail);
}

// 3. "$(Q$(BIG))": the kubelet reads the name "Q$(BIG" (undefined) and writes it back as is;
// verify steps one character and expands the inner $(BIG), so its value outgrows the 128 KiB
// cut and the token after it is cut away.
TEST_CASE(
    "review35b: a reference inside an undefined reference is expanded by verify, not by the "
    "kubelet",
    "[review35b]") {
    const std::string token = clusterToken();
    const size_t half = token.find('.') + 12;
    const json env = json::array(
        {{{"name", "BIG"}, {"valueFrom", {{"secretKeyRef", {{"name", "pad"}, {"key", "big"}}}}}},
         {{"name", "HEAD"}, {"value", token.substr(0, half)}},
         {{"name", "TAIL"}, {"value", token.substr(half)}},
         {{"name", "T"}, {"value", "$(Q$(BIG))$(R$(BIG))$(HEAD)$(TAIL)"}}});
    // Control: T without the nested references is found.
    json plain = env;
    plain[3]["value"] = "$(HEAD)$(TAIL)";
    REQUIRE(tokenBoundary(withEnv(pod(), plain),
                          {secret("pad", {{"big", std::string(120 * 1024, 'x')}})})
                .verdict == Verdict::Fail);
    // The kubelet's T: "$(Q$(BIG))$(R$(BIG))" and the token, a few hundred bytes.
    const Finding finding = tokenBoundary(withEnv(pod(), env),
                                          {secret("pad", {{"big", std::string(120 * 1024, 'x')}})});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict == Verdict::Fail);
}

// 4. The API server (Go's crypto/x509) takes any certificate of --client-ca-file as a trust
// anchor; OpenSSL without X509_V_FLAG_PARTIAL_CHAIN wants a self-signed root.
TEST_CASE("review35b: a client CA that is an intermediate: its client certificate passes",
          "[review35b]") {
    const auto keyPair =
        secret("id", {{"tls.crt", pki::kLeafCertificate}, {"tls.key", pki::kLeafKey}});
    // Control: the same pair, the CA a self-signed root and the intermediate beside the pair.
    auto withChain = keyPair;
    (*withChain.object)["data"]["ca.crt"] = base64Encode(pki::kIntermediate);
    REQUIRE(
        credentialsStatic(mountingSecret("id"), {withChain}, kIssuer, pki::kClusterCa).verdict ==
        Verdict::Fail);
    const Finding finding =
        credentialsStatic(mountingSecret("id"), {keyPair}, kIssuer, pki::kIntermediate);
    INFO(verdictName(finding.verdict));
    INFO(evidenceOf(finding));
    CHECK(finding.verdict == Verdict::Fail);
}

// 5. PKCS12_parse verifies the MAC first, with the iteration count the store names: a Secret
// writer (or the API server) names 2^31-1 and verify spends an hour per store.
TEST_CASE("review35b: a PKCS#12 store naming 2^31-1 MAC iterations hangs verify", "[review35b]") {
    const std::string store = pkcs12WithHugeMacIterations();
    // Control: the store as openssl wrote it (65,536 iterations, a MAC that verifies) is
    // judged at once: drop the 4-byte count for the 3-byte one, and the two lengths around it.
    std::string modest = store;
    REQUIRE(modest.compare(modest.size() - 6, 6, std::string("\x02\x04\x7f\xff\xff\xff")) == 0);
    REQUIRE(static_cast<unsigned char>(modest[1]) == 0x82);
    REQUIRE(static_cast<unsigned char>(modest[1040]) == 67);
    modest.replace(modest.size() - 6, 6, std::string("\x02\x03\x01\x00\x00", 5));
    modest[1040] = 66;
    const int outer =
        (static_cast<unsigned char>(modest[2]) << 8 | static_cast<unsigned char>(modest[3])) - 1;
    modest[2] = static_cast<char>(outer >> 8);
    modest[3] = static_cast<char>(outer & 0xff);
    const auto quick = runInChild(
        [&] {
            return credentialsStatic(mountingSecret("id"),
                                     {secret("id", {{"keystore.p12", modest}})}, kIssuer,
                                     pki::kClusterCa)
                .verdict;
        },
        std::chrono::seconds(20));
    REQUIRE(quick.finished);
    REQUIRE(quick.seconds < 2);
    const auto run = runInChild(
        [&] {
            return credentialsStatic(mountingSecret("id"),
                                     {secret("id", {{"keystore.p12", store}})}, kIssuer,
                                     pki::kClusterCa)
                .verdict;
        },
        std::chrono::seconds(20));
    INFO(fmt::format("finished {} after {:.1f} s, exit {}", run.finished, run.seconds,
                     run.exitCode));
    CHECK(run.finished);
    CHECK(run.exitCode == 12);  // unproven: a store that cannot be opened
}

// 6. The 1 MiB bound is per gzip stream; a value holds hundreds of streams, and the key scan
// keeps a copy of every form that starts with 0x30 ('0') or holds "-----BEGIN ".
TEST_CASE("review35b: one Secret value of gzip streams costs verify hundreds of MiB",
          "[review35b]") {
    std::string value;
    for (int i = 0; i < 400; ++i) value += gzippedZeroCharacters() + ' ';  // ~560 KiB
    const auto run = runInChild(
        [&] {
            return credentialsStatic(mountingSecret("blob"), {secret("blob", {{"data", value}})},
                                     kIssuer, pki::kClusterCa)
                .verdict;
        },
        std::chrono::seconds(300));
    INFO(fmt::format("finished {} after {:.1f} s, peak {} MiB, exit {}", run.finished, run.seconds,
                     run.peakKiB / 1024, run.exitCode));
    REQUIRE(run.finished);
    // Under AddressSanitizer the peak is mostly its shadow and quarantine (1.7 GiB here, 26 MiB
    // without): the bound is the code's, checked in the plain build.
    if (kAddressSanitizer)
        WARN("AddressSanitizer build: peak " << run.peakKiB / 1024 << " MiB, bound not checked");
    else
        CHECK(run.peakKiB < 256 * 1024);
    CHECK(run.seconds < 30);
    CHECK(run.exitCode == 12);  // unproven: streams past the 8 MiB one value's walk inflates
}

// 6b. Each value's walk is bounded, and the key scan holds the forms of every value at once:
// 80 keys of one gzip stream each (1 MiB of '0') would be 80 MiB held; a walk of a pod's values
// inflates 32 MiB in all (and holds 64 MiB at most), the rest is unproven.
TEST_CASE("review35b: the forms held for the key scan are bounded across values", "[review35b]") {
    json keys = json::object();
    for (int i = 0; i < 80; ++i) keys["part" + std::to_string(i)] = gzippedZeroCharacters();
    const Finding finding = credentialsStatic(mountingSecret("parts"), {secret("parts", keys)},
                                              kIssuer, pki::kClusterCa);
    INFO(evidenceOf(finding));
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK_THAT(evidenceOf(finding), Catch::Contains("or 32 MiB in all, or text still encoded past "
                                                    "3 base64 or hex layers: what lies past that "
                                                    "is not read"));
}

// 7. zlib stops at the first member's end; gunzip, zcat and Go's gzip.Reader (Helm) read on.
TEST_CASE("review35b: a kubeconfig in the second member of a gzip file passes", "[review35b]") {
    const std::string members = decodeBase64(kTwoMemberGzip);
    const size_t second = members.find("\x1f\x8b", 2);
    REQUIRE(second != std::string::npos);
    // Control: the second member alone is found.
    REQUIRE(tokenBoundary(mountingSecret("cfg"),
                          {secret("cfg", {{"kubeconfig.gz", members.substr(second)}})})
                .verdict == Verdict::Fail);
    const auto file = secret("cfg", {{"kubeconfig.gz", members}});
    const Finding finding = tokenBoundary(mountingSecret("cfg"), {file});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict != Verdict::Pass);
}

// 8. A Helm release is base64 (then the Secret's own), gzip, JSON: the gzip layer is one of
// the two decodings read, so the base64 data of a Secret in the chart's manifest is never
// decoded.
TEST_CASE("review35b: a Helm release whose manifest holds a Secret with a kubeconfig passes",
          "[review35b]") {
    // Control: the release's JSON itself (one base64 layer to the kubeconfig) is found.
    const auto inflated = rossoctl::kube::gunzip(decodeBase64(kHelmReleaseWithSecret), 1 << 20);
    REQUIRE(inflated);
    REQUIRE(
        tokenBoundary(mountingSecret("plain"), {secret("plain", {{"release", inflated->bytes}})})
            .verdict == Verdict::Fail);
    const auto release = secret("sh.helm.release.v1.agent.v1",
                                {{"release", kHelmReleaseWithSecret}}, "helm.sh/release.v1");
    const Finding finding = tokenBoundary(mountingSecret("sh.helm.release.v1.agent.v1"), {release});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict == Verdict::Fail);
}

// 9. The rewrite check reads managedFields; a writer clears them (managedFields: [{}]) after
// rewriting, and the Secret looks untouched since its creation.
TEST_CASE("review35b: a Secret rewritten after start, its managedFields cleared, passes",
          "[review35b]") {
    json started = withEnv(
        pod(),
        json::array({{{"name", "KUBE_TOKEN"},
                      {"valueFrom", {{"secretKeyRef", {{"name", "deploy"}, {"key", "t"}}}}}}}));
    started["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] =
        "2023-11-15T10:00:00Z";
    CredentialSource rewritten = secret("deploy", {{"t", "harmless"}});
    (*rewritten.object)["metadata"] = {{"name", "deploy"},
                                       {"creationTimestamp", "2023-11-14T09:00:00Z"},
                                       {"resourceVersion", "98231"}};
    const Finding finding = tokenBoundary(started, {rewritten});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict != Verdict::Pass);
}

// 10. After a restart, state.running.startedAt is the latest start; the first run's env (and
// what it wrote to the pod's emptyDir) held the Secret as it was before the rewrite.
TEST_CASE("review35b: a Secret rewritten between a container's first start and its restart passes",
          "[review35b]") {
    json restarted = withEnv(
        pod(),
        json::array({{{"name", "KUBE_TOKEN"},
                      {"valueFrom", {{"secretKeyRef", {{"name", "deploy"}, {"key", "t"}}}}}}}));
    restarted["status"]["startTime"] = "2023-11-15T10:00:00Z";
    restarted["status"]["containerStatuses"][0]["restartCount"] = 1;
    restarted["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] =
        "2023-11-15T12:00:00Z";
    restarted["status"]["containerStatuses"][0]["lastState"] = {
        {"terminated", {{"startedAt", "2023-11-15T10:00:01Z"}, {"exitCode", 1}}}};
    CredentialSource rewritten = secret("deploy", {{"t", "harmless"}});
    (*rewritten.object)["metadata"] = {
        {"name", "deploy"},
        {"creationTimestamp", "2023-11-14T09:00:00Z"},
        {"managedFields", {{{"manager", "rotator"}, {"time", "2023-11-15T11:00:00Z"}}}}};
    const Finding finding = tokenBoundary(restarted, {rewritten});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict != Verdict::Pass);
}

// 11. Both times are whole seconds: a rewrite in the second the container started may be after
// it, and is judged as before.
TEST_CASE("review35b: a Secret rewritten in the same second the container started passes",
          "[review35b]") {
    json started = withEnv(
        pod(),
        json::array({{{"name", "KUBE_TOKEN"},
                      {"valueFrom", {{"secretKeyRef", {{"name", "deploy"}, {"key", "t"}}}}}}}));
    started["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] =
        "2023-11-15T10:00:00Z";
    CredentialSource rewritten = secret("deploy", {{"t", "harmless"}});
    (*rewritten.object)["metadata"] = {
        {"name", "deploy"},
        {"creationTimestamp", "2023-11-14T09:00:00Z"},
        {"managedFields", {{{"manager", "rotator"}, {"time", "2023-11-15T10:00:00Z"}}}}};
    const Finding finding = tokenBoundary(started, {rewritten});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict != Verdict::Pass);
}

// 12. A bootstrap token kept as its Secret keeps it (token-id, token-secret) under type Opaque:
// two files the pod joins with a '.'.
TEST_CASE("review35b: a bootstrap token's id and secret as two keys of an Opaque Secret pass",
          "[review35b]") {
    const auto copy = secret("join", {{"token-id", "abcdef"},
                                      {"token-secret", "0123456789abcdef"},
                                      {"usage-bootstrap-authentication", "true"}});
    const Finding finding = tokenBoundary(mountingSecret("join"), {copy});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict != Verdict::Pass);
}

// 13. A hex run is decoded from 48 digits; a bootstrap token is 23 bytes, 46 digits.
TEST_CASE("review35b: a hex-encoded bootstrap token passes", "[review35b]") {
    std::string hex;
    for (unsigned char c : std::string("abcdef.0123456789abcdef")) hex += fmt::format("{:02x}", c);
    REQUIRE(hex.size() == 46);
    const Finding finding =
        tokenBoundary(withEnv(pod(), json::array({{{"name", "JOIN_HEX"}, {"value", hex}}})));
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict == Verdict::Fail);
}

// 14. A kubeconfig kept as JSON inside a JSON string (Argo CD's cluster config, a tfvars
// JSON): its keys are \"users\", which the mapping-key scan does not take as keys.
TEST_CASE("review35b: a JSON kubeconfig kept as an escaped JSON string passes", "[review35b]") {
    const json kubeconfig = {
        {"apiVersion", "v1"},
        {"kind", "Config"},
        {"clusters", {{{"name", "c"}, {"cluster", {{"server", "https://10.0.0.1:6443"}}}}}},
        {"users", {{{"name", "u"}, {"user", {{"token", kStaticToken}}}}}}};
    // Control: the same kubeconfig as plain JSON is found.
    REQUIRE(tokenBoundary(
                withVolume(pod(), {{"name", "v"}, {"configMap", {{"name", "plain"}}}}),
                {{"configmap", "plain", json{{"data", {{"config.json", kubeconfig.dump()}}}}, ""}})
                .verdict == Verdict::Fail);
    const CredentialSource values{
        "configmap", "values",
        json{{"data", {{"config.json", json{{"kubeconfig", kubeconfig.dump()}}.dump()}}}}, ""};
    const json mounting = withVolume(pod(), {{"name", "v"}, {"configMap", {{"name", "values"}}}});
    const Finding finding = tokenBoundary(mounting, {values});
    INFO(verdictName(finding.verdict));
    CHECK(finding.verdict == Verdict::Fail);
}

// 15. A truststore (certificates, no key) is read as a store whose key could not be read.
TEST_CASE("review35b: a PKCS#12 truststore (no key) is called an unreadable private key",
          "[review35b][!mayfail]") {
    const auto trust = secret("trust", {{"truststore.p12", decodeBase64(kTruststorePkcs12)}});
    const Finding finding =
        credentialsStatic(mountingSecret("trust"), {trust}, kIssuer, pki::kClusterCa);
    INFO(evidenceOf(finding));
    CHECK(finding.verdict == Verdict::Pass);
}

// 16. An encrypted PEM key is unproven ("could not be read"); the same key as encrypted DER
// (PKCS#8 EncryptedPrivateKeyInfo) is no key at all to verify, and its certificate passes.
TEST_CASE("review35b: an encrypted DER private key beside its certificate passes", "[review35b]") {
    // openssl pkcs8 -topk8 -outform DER -v2 aes-256-cbc of the fixtures' leaf key.
    const std::string encryptedKey = decodeBase64(
        "MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjI4f+"
        "4d9tOMAICCAAwDAYIKoZIhvcNAgkFADAdBglghkgB"
        "ZQMEASoEELLWeQLbyro46vIwymcCQ/YEgZBIQq/"
        "a9+jmuKz2VTCqxBNkiQELQ4t0e6Hy9wlCDrn4Q03xKkxSBjY8p1ow"
        "xVaIOm1zyOJ/SibNjZRwyZ6oJXAl9p3xR4TBk6IY4iwiropm/oKA+fdyWyBxjLvUEr7pyBxQtkSxnAbIfjy0h/"
        "rD2wAO"
        "y/PRKbW7iRkoJu//wTeWIql9lVUZylku0aMI5j5i8O8=");
    // Control: the same bytes as PEM ("ENCRYPTED PRIVATE KEY") are an unreadable key.
    const std::string pem = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + base64Encode(encryptedKey) +
                            "\n-----END ENCRYPTED PRIVATE KEY-----\n";
    REQUIRE(
        credentialsStatic(mountingSecret("id"),
                          {secret("id", {{"tls.key", pem}, {"tls.crt", pki::kLeafCertificate}})},
                          kIssuer, pki::kClusterCa)
            .verdict == Verdict::Unproven);
    const auto pair = secret("id", {{"tls.key", encryptedKey},
                                    {"tls.crt", pki::kLeafCertificate},
                                    {"ca.crt", pki::kIntermediate},
                                    {"password", "agent"}});
    const Finding finding =
        credentialsStatic(mountingSecret("id"), {pair}, kIssuer, pki::kClusterCa);
    INFO(evidenceOf(finding));
    CHECK(finding.verdict != Verdict::Pass);
}
