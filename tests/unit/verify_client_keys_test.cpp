// Client keys the pod can read, judged against the cluster's client CA (issue 35, review 35):
// a certificate that is not valid yet is still the CA's, and a hostile pile of certificates
// costs a bounded number of chain builds, after which the key is unproven, never passed.
#include <catch2/catch.hpp>

#include "pki_fixtures.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/x509.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;
using rossoctl::kube::base64Encode;

namespace {

json podMountingSecret(const std::string& name) {
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["volumes"].push_back({{"name", "id"}, {"secret", {{"secretName", name}}}});
    return pod;
}

CredentialSource secretHolding(const std::string& name, const json& plain) {
    json data = json::object();
    for (const auto& [key, value] : plain.items())
        data[key] = base64Encode(value.get<std::string>());
    return {"secret", name, json{{"type", "Opaque"}, {"data", data}}, ""};
}

std::string pem(const std::string& der) {
    const std::string body = base64Encode(der);
    std::string text = "-----BEGIN CERTIFICATE-----\n";
    for (size_t at = 0; at < body.size(); at += 64) text += body.substr(at, 64) + "\n";
    return text + "-----END CERTIFICATE-----\n";
}

// `count` certificates that all hold the fixtures' leaf public key, certificate i naming
// certificate i+1 as its issuer: each matches the key, and each chain build walks the others.
// Chain building goes by names, so a template's names are patched in place (signatures are
// never reached).
std::string certificatesOfTheLeafKey(int count) {
    const auto templateDer = rossoctl::kube::base64Decode(
        "MIIBIzCByqADAgECAgEBMAoGCCqGSM49BAMCMBAxDjAMBgNVBAMMBW4wMDAxMCAXDTIwMDEwMTAwMDAwMFoYDzIx"
        "MjAwMTAxMDAwMDAwWjAQMQ4wDAYDVQQDDAVuMDAwMDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPsRIeYekSKn"
        "Y7O2RnNFDD2yzretpHU2ZJsqu/cN3ZMbRzDS8xECnhQ2Xfp0chRFdQ1rLimXsy+dhUAoJB65CD6jEzARMA8GA1Ud"
        "EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAK5JZ4UNBsPWscprSvm/7ikVkVuln87rR1KLrCobkiz5AiBf"
        "063eoBg1D/eCgORJw3Xorq4R6K/YhG0aDqzueTQOkw==");
    REQUIRE(templateDer);
    const size_t subjectAt = templateDer->find("n0000"), issuerAt = templateDer->find("n0001");
    REQUIRE(subjectAt != std::string::npos);
    REQUIRE(issuerAt != std::string::npos);
    std::string certificates;
    for (int i = 0; i < count; ++i) {
        std::string der = *templateDer;
        der.replace(subjectAt, 5, fmt::format("n{:04}", i));
        der.replace(issuerAt, 5, fmt::format("n{:04}", i + 1));
        certificates += pem(der);
    }
    return certificates;
}

}  // namespace

TEST_CASE("client keys: a certificate the client CA signed that is not valid yet is a credential",
          "[verify]") {
    // The API server takes it from its notBefore on, or now if its clock runs ahead of this one:
    // "the CA did not sign it" would be false, and so would a pass.
    const Finding finding = credentialsStatic(
        podMountingSecret("id"),
        {secretHolding("id", {{"tls.crt", pki::kFutureLeaf}, {"tls.key", pki::kFutureLeafKey}})},
        "", pki::kFutureCa);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK_FALSE(mentions(finding, "did not sign"));
    CHECK(mentions(finding, "future-admin"));
}

TEST_CASE("client keys: chain builds per scan are bounded; past the bound a key is unproven",
          "[verify]") {
    // Unbounded, 64 copies of one key beside 1,024 certificates of it were 65,536 chain builds
    // (minutes of CPU from one Secret); the suite's time-out shows a regression.
    std::string keys;
    for (int i = 0; i < 64; ++i) keys += pki::kLeafKey;
    const std::string certificates = certificatesOfTheLeafKey(1024);
    REQUIRE(keys.size() + certificates.size() < 1024 * 1024);
    const auto scan = rossoctl::kube::scanPrivateKeys({keys, certificates}, pki::kClusterCa);
    REQUIRE(scan.keys.size() == 64);
    for (const auto& key : scan.keys) {
        CHECK(key.hasCertificate);
        CHECK_FALSE(key.signedByAuthority);
        CHECK(key.unjudged);
    }

    // Through verify: unproven, and named so.
    const Finding finding = credentialsStatic(
        podMountingSecret("pile"),
        {secretHolding("pile", {{"keys.pem", keys}, {"certificates.pem", certificates}})}, "",
        pki::kClusterCa);
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding, "more certificates beside it than are checked"));
}

TEST_CASE("client keys: a signed certificate after the budget is spent is never passed",
          "[verify]") {
    // Two chain builds allowed: the pile's certificates spend them, then the real chain waits.
    const std::string texts =
        certificatesOfTheLeafKey(3) + pki::kIntermediate + pki::kLeafCertificate;
    const auto bounded = rossoctl::kube::scanPrivateKeys({pki::kLeafKey, texts}, pki::kClusterCa,
                                                         {.chainBuilds = 2});
    REQUIRE(bounded.keys.size() == 1);
    CHECK_FALSE(bounded.keys[0].signedByAuthority);
    CHECK(bounded.keys[0].unjudged);
    // With the default budget the same texts fail the key: the bound is what made it unjudged.
    const auto whole = rossoctl::kube::scanPrivateKeys({pki::kLeafKey, texts}, pki::kClusterCa);
    CHECK(whole.keys[0].signedByAuthority);
    CHECK_FALSE(whole.keys[0].unjudged);
}
