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

// The fixtures' client pair (leaf signed by the intermediate the cluster's CA signed), as DER
// (made with: openssl pkey -outform DER; openssl x509 -outform DER).
const std::string kLeafKeyDer =
    "MHcCAQEEIH6XLEH5C2aG4QZni9b8BrYFniHIqHmW/Sj/wxXRxVzGoAoGCCqGSM49AwEHoUQDQgAE+xEh5h6RIqdjs7ZG"
    "c0UMPbLOt62kdTZkmyq79w3dkxtHMNLzEQKeFDZd+nRyFEV1DWsuKZezL52FQCgkHrkIPg==";
const std::string kLeafCertificateDer =
    "MIIBwTCCAWegAwIBAgIUf5IU1TgRnEfoJbc0FUbPzVWUUQkwCgYIKoZIzj0EAwIwHDEaMBgGA1UEAwwRdGVzdC1pbnRl"
    "cm1lZGlhdGUwIBcNMjYxMjA0MTYwODU3WhgPMjEyNjExMTAxNjA4NTdaMC8xFzAVBgNVBAoMDnN5c3RlbTptYXN0ZXJz"
    "MRQwEgYDVQQDDAthZ2VudC1hZG1pbjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPsRIeYekSKnY7O2RnNFDD2yzret"
    "pHU2ZJsqu/cN3ZMbRzDS8xECnhQ2Xfp0chRFdQ1rLimXsy+dhUAoJB65CD6jcjBwMAkGA1UdEwQCMAAwDgYDVR0PAQH/"
    "BAQDAgeAMBMGA1UdJQQMMAoGCCsGAQUFBwMCMB0GA1UdDgQWBBQSjL3uLtUWGn5ZeYfXNEzgUkQUFzAfBgNVHSMEGDAW"
    "gBS0NER69UDpyVgj4HiW9HojzT6t/TAKBggqhkjOPQQDAgNIADBFAiA6maxlMyA9nKtRL0UH/EFcgrunJA1FtVnPDBtr"
    "R4uy2QIhAJZW5tTP/8Sb6sW3P/5CdP9THZSdUvmshTyl//d6S6yX";
const std::string kIntermediateDer =
    "MIIBnTCCAUOgAwIBAgIUbToDEzYXArkgDcl6t/prBYe6zRcwCgYIKoZIzj0EAwIwGjEYMBYGA1UEAwwPdGVzdC1jbHVz"
    "dGVyLWNhMCAXDTI2MTIwNDE2MDg1N1oYDzIxMjYxMTEwMTYwODU3WjAcMRowGAYDVQQDDBF0ZXN0LWludGVybWVkaWF0"
    "ZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOJresKFz8ZQ2WbHnonZomidHV9z7vJlwDsbaJmyo1xLCVAx5WjTHFWB"
    "qAQ3NnYDI5GaZjQsHL+sDKqIxHrkvxejYzBhMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMB0GA1UdDgQW"
    "BBS0NER69UDpyVgj4HiW9HojzT6t/TAfBgNVHSMEGDAWgBRrxIBnPsR+u7fEn0nQwKMEo3OiojAKBggqhkjOPQQDAgNI"
    "ADBFAiBTMdNvgwsRZe9YNYslc8xx/2GnawO3QUdpQVW1GPxFcgIhALEcyEuUM46x4hOOVv5wob79OrqHCgZajOKCQur4"
    "ELO9";
// The same pair and the intermediate as PKCS#12 with an empty password (openssl pkcs12 -export
// -passout pass:), as Java clients keep a client credential.
const std::string kLeafPkcs12 =
    "MIIGHAIBAzCCBdIGCSqGSIb3DQEHAaCCBcMEggW/MIIFuzCCBHIGCSqGSIb3DQEHBqCCBGMwggRfAgEAMIIEWAYJKoZI"
    "hvcNAQcBMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAij/Hz427+WpgICCAAwDAYIKoZIhvcNAgkFADAdBglg"
    "hkgBZQMEASoEEEWlc6JAj9ss6pl3yNDmFQOAggPwmchhxqSlga0qoBoxuW564+b/YJJ2EysZQwuw8d2NguNtZ2S44WUg"
    "uaoWhF4Yy3mXWONO+9JPJRRs1r1ZHGWF/+VSOv/W5z7YTxxUUY/D9HDPhl9BpDwS/4myLvPmr79Z8KCc/NjDmJSYmsPI"
    "B4pMmC9qeG8/jcNBEfF2JAHIp0SBMmq/wwRq4a+1XgP8Kwrmp5FPXPdud9CKqgfXwLJprce6fX4A86RCLBSxMr+XfGB6"
    "A/lYOMGhgOvK/VpxBK0SlgPvIH4PB6VYps3S6M10EokY4O5Rz8Unk5reRbeq7xOI2WJS0HeDrfe+3UcpzBz9uQ4I/hD1"
    "hFOFcjrYiaMh1+fDbzhhPulcLsN5vbjLNdypvTXHl1rq3BBQRmHexW/tCOh+cML6EtW+jPlgX6NsugMizkhSDWHWoWDM"
    "njBaP3xbTsFBBw5VMVjK/GhKwg1oaDlAXc92+RJrOMPZLEj7Z1o0x6D7OphiNzLo9SCEw+QB1SIgctRBSp7x9/o3htjo"
    "mVscq1SltOA4xaJ9P0wJxuI3kl8KA3HWzfooOcDhA0JdPXzxRRAo+ILVGOFfqN/9C7GQQzBRLuooZs0diwCLtLnekf9S"
    "qMib743nfsJXmKNDQg1FLMfPygnduoF5h6kYj95iyhxYbtltSr8jPDJWMTY691LRxko1gomAF+tqdRvwGRj3V1/LGgYe"
    "mJ5ww2wSeVDFWd2X3kVgFr5rlM1tEodGvYY1f+uIrBBXg1fJ/B9cefDLpYbqoYvBQpNKw+35TGg2rAvTMJ0P7dJaXdRb"
    "8PwpsBWnO0XiSiSy29HP6vtbEvbn36LWYGobhHhLlTlDqkXt1fbClubQNdj+oWDL7hO29yhUEYNuRuYWXaItgRfRXmfZ"
    "jUtkhRGohzzFH3yIrZXvXrwwVPoc1Dhwa6mlC2cMet2HIiyUg1BUF+54rE/dGSa/hUPRCviChJH8+g4VFphOwQyoMySQ"
    "9/86hmZ2A5QRwH5HwEIWnZa6Yf2TYhRpi0tDehyIjSCsa12jBVXQXl65nGBDc3EaU6hkR/cGnx34WEif5/Vhj/qa+28I"
    "8u9M1UNZL2ca+01OeJVCZ0d17yTiWU6Y4zQvIJeMooDYSj8QhxQ0raMVHn2Jg40Pd9YE6G6tAWcIgP569lIB6AE++Rm7"
    "fmTkkFcij8JlOSA21lo+R9UQRIx+FG9xubHnB9ykE1Cq8uHJkICValx5Y9QvTpaVap0fclfVLQYX0VtXq9X6MD1CgTnv"
    "K4aiySCTdbVpmpCWuy5cCADQ2gCxmEYnNv/dMFUDCs4mJtwTTK2Ntlrzg9/eSSP0ZQJtKCRDr2SZT6WtNls0WT1M15ID"
    "kZ78MIIBQQYJKoZIhvcNAQcBoIIBMgSCAS4wggEqMIIBJgYLKoZIhvcNAQwKAQKgge8wgewwVwYJKoZIhvcNAQUNMEow"
    "KQYJKoZIhvcNAQUMMBwECLfmeNCrsfvGAgIIADAMBggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQte9eyZBOJ5jnSqOk"
    "5xDg2wSBkJ/8fm3LDKN2Rt9Qvgl6xbxDMi/YqTLpsIi2p0k/2a7vbZCK/VM5Nf9ZOgbjODRJUgiUDIL6zvVDEIvXmaZS"
    "aakVvGH0vsjjPVhxrxPIIEQbnKUmN77OdGmfUn2bq9CsRFS60TL9of1W5I1yAgYiat2EqjSYz7/OvsxhGJAIlm/j5zZJ"
    "heP+GQXD6ii2CaDJ/jElMCMGCSqGSIb3DQEJFTEWBBTgXEpmEknU6pnwfUpmyXm8LaF/UTBBMDEwDQYJYIZIAWUDBAIB"
    "BQAEIBr7Wd74d4etIuB+rzulUXs+j8QtZLyXORo5CiuPJW1LBAiQxr0ONnGdsQICCAA=";

// The leaf pair as PKCS#12 under the password "changeit" (openssl pkcs12 -export).
const std::string kLockedPkcs12 =
    "MIIETAIBAzCCBAIGCSqGSIb3DQEHAaCCA/MEggPvMIID6zCCAqIGCSqGSIb3DQEHBqCCApMwggKPAgEAMIICiAYJ"
    "KoZIhvcNAQcBMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAht5LcbdwQ5SQICCAAwDAYIKoZIhvcNAgkF"
    "ADAdBglghkgBZQMEASoEENBCJycRE7YikvzNjVkseQuAggIggMDVQIG85cnLK3S7Oy91NPymulCl1JHXF9ksRRBW"
    "XHMrzmc/P0IL3xjf8+/gKkLpSJYygX55NFSOjIiOq/DSM9FZNPFau67Q2EAmh6qjsms2Nbn5Kmx7j5fuAOD1r825"
    "NmPzJ52SmXGYXOYQFpJmL5PK5u1V56kyPWyqPNH2FWvIwL16Eg0Kphh96uHSE9Yy6nQScqWt7ct5kc5utgLMS1fJ"
    "GsLG9SKeVRm9uATxtFayd/qxCFKXk8csYUMEEYVa1oYMOJMPRngiO0GBGOY4/pNfRmcpwGxKMHwcaISYIjQOVm55"
    "tkT32NuHN+ew8UVTK+gmgRBgQcuoZRApF0988F37mV+3ODrtPjsMVR5nN1jRWEg2voOlwXBOwn0UzKEJiYLBUvCP"
    "iv9Z/b/xGqwB+khOpVwfci8TAXoNzh3nYpqD2sY8Q9qy2Ms9nVeK3ED+40CDCZrL87TXe2sykWpiQJC9HTT8lPnI"
    "R7p1h9X0i3bKhjewfKmV92HHRvHNZaGRlub+R8woQ5SbDghc9Lz/bhXi88OdZPTbytvcKkF+RlGeTGqFwbBMcYng"
    "02ze7jUaox+2dXc2Lq2pnoqD7nmZm+V8NN7uZQg8SPoPOZKW7DeSODpUU4hDzRNNFyCchXxyN0pg3wez33oeTDlP"
    "5pwh9NDFZPlyp9epv/qmJhfTt+091shGAHixsLugn6zf6/KVFauTuGv+O3lnpASgqhRWKTCCAUEGCSqGSIb3DQEH"
    "AaCCATIEggEuMIIBKjCCASYGCyqGSIb3DQEMCgECoIHvMIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAc"
    "BAjFZi/c4YjeXAICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEFeQryCyxV7va6TyvDcHa0cEgZCbmPrc"
    "WD7PecO3FSE24nVp3RpkpL9eM31Mnw4mRuYO5IWlP5WN4d+Rxs4Bf4XxDoOI3pVj4IapBx9/Pombx2sg3OY5iibj"
    "VBz6sM10slUC74iu93PlFiVlHaJRRhRzUpVuUIoVqp0tUDbHa3c3yexkANQN7igc2HGdIspZrB223k8mf7f+dBku"
    "fGMNMGv54owxJTAjBgkqhkiG9w0BCRUxFgQU4FxKZhJJ1OqZ8H1KZsl5vC2hf1EwQTAxMA0GCWCGSAFlAwQCAQUA"
    "BCCqkRXu6lWX6TTuhxQ5rBoXiWxEhPce+A4irIs6m9qfCwQITLx9tHO1R9wCAggA";

std::string decodeBase64(const std::string& text) {
    auto decoded = rossoctl::kube::base64Decode(text);
    REQUIRE(decoded);
    return *decoded;
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

TEST_CASE("client keys: a client key and certificate as DER or PKCS#12", "[verify]") {
    const json mounting = podMountingSecret("id");
    // tls.key / tls.crt as DER (binary), the intermediate beside them.
    const auto der = secretHolding("id", {{"tls.key", decodeBase64(kLeafKeyDer)},
                                          {"tls.crt", decodeBase64(kLeafCertificateDer)},
                                          {"ca.crt", decodeBase64(kIntermediateDer)}});
    CHECK(credentialsStatic(mounting, {der}, "", pki::kClusterCa).verdict == Verdict::Fail);
    // A keystore.p12, with no password or not: never opened (its writer picks the key
    // derivation's iterations: review 35b found 2^31 hours long), so unproven, never passed.
    const auto p12 = secretHolding("id", {{"keystore.p12", decodeBase64(kLeafPkcs12)}});
    CHECK(credentialsStatic(mounting, {p12}, "", pki::kClusterCa).verdict == Verdict::Unproven);
    // A store under a password is a key that cannot be read: unproven, not passed.
    const auto locked = secretHolding("id", {{"keystore.p12", decodeBase64(kLockedPkcs12)}});
    const Finding closed = credentialsStatic(mounting, {locked}, "", pki::kClusterCa);
    CHECK(closed.verdict == Verdict::Unproven);
    CHECK(mentions(closed, "could not be read"));
    CHECK(rossoctl::kube::holdsPrivateKeyMaterial(decodeBase64(kLockedPkcs12)));
    CHECK(rossoctl::kube::holdsPrivateKeyMaterial(decodeBase64(kLeafKeyDer)));
    CHECK_FALSE(rossoctl::kube::holdsPrivateKeyMaterial(decodeBase64(kLeafCertificateDer)));
}
