// Attack 56 T3: a service-account token xz-, lzma-, bzip2- or zlib-compressed, or its letters
// rotated (rot13, any Caesar shift), passed "no credential by shape"; each now fails, and a
// compressed value that cannot be read whole is unproven, never a pass.
#include <catch2/catch.hpp>

#include "local_shell.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl::verify;
using rossoctl::testing::runHere;
using rossoctl::testing::StdinAfterInput;
using rossoctl::testing::verify_fixtures::jwt;

namespace {

std::string serviceAccountToken() {
    return jwt({{"iss", "https://kubernetes.default.svc.cluster.local"},
                {"sub", "system:serviceaccount:team1:agent-bot"},
                {"kubernetes.io", {{"namespace", "team1"}}},
                {"exp", 1900000000}});
}

// `input` through python3's own compressor `expression` (of `data`), as an agent's would be.
std::string compressed(const std::string& expression, const std::string& input) {
    const auto [status, out] =
        runHere({"python3", "-c",
                 "import sys, lzma, bz2, zlib\ndata = sys.stdin.buffer.read()\n"
                 "sys.stdout.buffer.write(" +
                     expression + ")"},
                input, StdinAfterInput::Ends);
    REQUIRE(status == 0);
    REQUIRE(!out.empty());
    return out;
}

// Letters rotated: lower case by `lower`, upper case by `upper` (tr 'A-Za-z' 'N-ZA-Mn-za-m').
std::string rotated(std::string text, int lower, int upper) {
    for (char& c : text) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>('a' + (c - 'a' + lower) % 26);
        if (c >= 'A' && c <= 'Z') c = static_cast<char>('A' + (c - 'A' + upper) % 26);
    }
    return text;
}

}  // namespace

TEST_CASE("attack 56 T3: a compressed token fails the token check by its shape",
          "[verify][false-pass]") {
    const std::string token = serviceAccountToken();
    const std::string written = "TOKEN=" + token + "\n";
    const std::pair<const char*, const char*> forms[] = {
        {"xz", "lzma.compress(data)"},
        {"lzma", "lzma.compress(data, format=lzma.FORMAT_ALONE)"},
        {"bzip2", "bz2.compress(data)"},
        {"zlib", "zlib.compress(data)"},
        {"deflate", "zlib.compress(data, wbits=-15)"},
        {"xz of bzip2", "lzma.compress(bz2.compress(data))"},
    };
    for (const auto& [name, expression] : forms) {
        INFO(name);
        const std::string value = compressed(expression, written);
        const CredentialShape shape = credentialShape(value, "");
        CHECK(shape.verdict == Verdict::Fail);
        CHECK_THAT(shape.what, Catch::Contains("service-account token"));
        // As a ConfigMap's binaryData holds it after kubectl --from-file, base64 in the API.
        CHECK(credentialShape(rossoctl::kube::base64Encode(value), "").verdict == Verdict::Fail);
    }
}

TEST_CASE("attack 56 T3: a compressed value not read whole is unproven", "[verify][false-pass]") {
    const std::string token = serviceAccountToken();
    SECTION("damaged after its header") {
        std::string value = compressed("lzma.compress(data)", token);
        value.resize(value.size() / 2);
        CHECK(credentialShape(value, "").verdict != Verdict::Pass);
        std::string bzip = compressed("bz2.compress(data)", token);
        bzip.resize(bzip.size() / 2);
        CHECK(credentialShape(bzip, "").verdict != Verdict::Pass);
    }
    SECTION("a bomb: the token after more than the bound") {
        const std::string value = compressed("lzma.compress(b'\\0' * (3 << 20) + data)", token);
        CHECK(value.size() < 64 * 1024);
        const CredentialShape shape = credentialShape(value, "");
        CHECK(shape.verdict == Verdict::Unproven);
        CHECK_THAT(shape.what, Catch::Contains("not read"));
    }
    SECTION("a magic number verify does not decode (zstd)") {
        const std::string zstd = std::string("\x28\xb5\x2f\xfd", 4) + std::string(200, 'x');
        CHECK(credentialShape(zstd, "").verdict == Verdict::Unproven);
    }
    SECTION("plain text and random bytes are not compressed") {
        CHECK(credentialShape("BZh is how bzip2 starts, not this text", "").verdict ==
              Verdict::Pass);
        std::string noise;
        for (int i = 0; i < 4096; ++i) noise += static_cast<char>((i * 7919 + 13) % 251);
        CHECK(credentialShape(noise, "").verdict == Verdict::Pass);
    }
}

TEST_CASE("review 68 H4: a raw-deflated token past the pod's spent budget is unproven",
          "[verify][false-pass]") {
    const std::string value = rossoctl::kube::base64Encode(
        compressed("zlib.compress(data, wbits=-15)", "TOKEN=" + serviceAccountToken() + "\n"));
    size_t fresh = 32 * 1024 * 1024;
    CHECK(credentialShape(value, "", fresh).verdict == Verdict::Fail);
    // Values before it (digits, gzip of zeros) spent the budget, all or nearly.
    for (const size_t left : {size_t{0}, size_t{64}}) {
        size_t spent = left;
        const CredentialShape shape = credentialShape(value, "", spent);
        INFO(left);
        CHECK(shape.verdict == Verdict::Unproven);
        CHECK_THAT(shape.what, Catch::Contains("not read"));
    }
}

TEST_CASE("attack 56 T3: a token with its letters rotated fails", "[verify][false-pass]") {
    const std::string token = serviceAccountToken();
    SECTION("rot13, as tr 'A-Za-z' 'N-ZA-Mn-za-m' writes it") {
        const CredentialShape shape = credentialShape("token: " + rotated(token, 13, 13), "");
        CHECK(shape.verdict == Verdict::Fail);
        CHECK_THAT(shape.what, Catch::Contains("rotated"));
    }
    SECTION("any shift, the cases apart") {
        for (const auto& [lower, upper] : {std::pair{1, 1}, {5, 5}, {25, 25}, {3, 17}}) {
            INFO(lower << " " << upper);
            CHECK(credentialShape(rotated(token, lower, upper), "").verdict == Verdict::Fail);
        }
    }
    SECTION("rotated, then base64-encoded") {
        CHECK(credentialShape(rossoctl::kube::base64Encode(rotated(token, 13, 13)), "").verdict ==
              Verdict::Fail);
    }
    SECTION("ordinary text with mixed case passes") {
        CHECK(credentialShape("Hello World, this is a README with CamelCase words and abcDEF", "")
                  .verdict == Verdict::Pass);
    }
}
