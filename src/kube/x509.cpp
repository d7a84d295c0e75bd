#include "rossoctl/kube/x509.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <map>
#include <memory>
#include <string_view>

#include "shared_library.hpp"

namespace rossoctl::kube {

namespace {

struct X509Functions {
    decltype(&::BIO_new_mem_buf) bioNew;
    decltype(&::BIO_free) bioFree;
    decltype(&::PEM_read_bio_X509) readCertificate;
    decltype(&::PEM_read_bio_PrivateKey) readKey;
    decltype(&::X509_free) certificateFree;
    decltype(&::EVP_PKEY_free) keyFree;
    decltype(&::X509_check_private_key) keyMatches;
    decltype(&::X509_STORE_new) storeNew;
    decltype(&::X509_STORE_free) storeFree;
    decltype(&::X509_STORE_add_cert) storeAdd;
    decltype(&::X509_STORE_set_flags) storeFlags;
    decltype(&::X509_STORE_CTX_new) contextNew;
    decltype(&::X509_STORE_CTX_free) contextFree;
    decltype(&::X509_STORE_CTX_init) contextInit;
    decltype(&::X509_verify_cert) verify;
    decltype(&::X509_get_subject_name) subjectName;
    decltype(&::X509_NAME_oneline) nameText;
    decltype(&::OPENSSL_sk_new_null) stackNew;
    decltype(&::OPENSSL_sk_push) stackPush;
    decltype(&::OPENSSL_sk_free) stackFree;
    decltype(&::ERR_clear_error) clearErrors;
    decltype(&::d2i_X509) certificateFromDer;
    decltype(&::d2i_AutoPrivateKey) keyFromDer;
    decltype(&::d2i_PKCS12) pkcs12FromDer;
    decltype(&::PKCS12_free) pkcs12Free;
    decltype(&::d2i_X509_SIG) encryptedKeyFromDer;
    decltype(&::X509_SIG_free) encryptedKeyFree;
};

const X509Functions& x509Functions() {
    static const SharedLibrary library("libcrypto.so.3", "libssl3");
    auto get = [&](auto& slot, const char* name) {
        slot = library.function<std::remove_reference_t<decltype(slot)>>(name);
    };
    static const X509Functions loaded = [&] {
        X509Functions f{};
        get(f.bioNew, "BIO_new_mem_buf");
        get(f.bioFree, "BIO_free");
        get(f.readCertificate, "PEM_read_bio_X509");
        get(f.readKey, "PEM_read_bio_PrivateKey");
        get(f.certificateFree, "X509_free");
        get(f.keyFree, "EVP_PKEY_free");
        get(f.keyMatches, "X509_check_private_key");
        get(f.storeNew, "X509_STORE_new");
        get(f.storeFree, "X509_STORE_free");
        get(f.storeAdd, "X509_STORE_add_cert");
        get(f.storeFlags, "X509_STORE_set_flags");
        get(f.contextNew, "X509_STORE_CTX_new");
        get(f.contextFree, "X509_STORE_CTX_free");
        get(f.contextInit, "X509_STORE_CTX_init");
        get(f.verify, "X509_verify_cert");
        get(f.subjectName, "X509_get_subject_name");
        get(f.nameText, "X509_NAME_oneline");
        get(f.stackNew, "OPENSSL_sk_new_null");
        get(f.stackPush, "OPENSSL_sk_push");
        get(f.stackFree, "OPENSSL_sk_free");
        get(f.clearErrors, "ERR_clear_error");
        get(f.certificateFromDer, "d2i_X509");
        get(f.keyFromDer, "d2i_AutoPrivateKey");
        get(f.pkcs12FromDer, "d2i_PKCS12");
        get(f.pkcs12Free, "PKCS12_free");
        get(f.encryptedKeyFromDer, "d2i_X509_SIG");
        get(f.encryptedKeyFree, "X509_SIG_free");
        return f;
    }();
    return loaded;
}

// Never asks for a passphrase (OpenSSL's default would prompt on the terminal).
int refusePassphrase(char*, int, int, void*) {
    return -1;
}

struct Block {
    std::string_view label;
    std::string_view text;  // BEGIN line to END line, whole
};

// The PEM blocks of `text`, each whole, found with plain searches (linear in the text). Each
// block is read on its own, so one that fails (an encrypted key) does not hide those after it.
std::vector<Block> pemBlocks(std::string_view text) {
    static constexpr std::string_view kBegin = "-----BEGIN ", kDashes = "-----";
    static constexpr size_t kLongestLabel = 64;
    std::vector<Block> blocks;
    for (size_t at = text.find(kBegin); at != std::string_view::npos;) {
        const size_t labelAt = at + kBegin.size();
        const size_t next = text.find(kBegin, labelAt);
        // A block holds no other BEGIN: each search stays before the next one (linear).
        const std::string_view region = text.substr(
            labelAt, next == std::string_view::npos ? std::string_view::npos : next - labelAt);
        const size_t labelEnd = region.substr(0, kLongestLabel + kDashes.size()).find(kDashes);
        const std::string_view label =
            labelEnd == std::string_view::npos ? std::string_view() : region.substr(0, labelEnd);
        if (!label.empty() && label.find('\n') == std::string_view::npos) {
            const std::string end = "-----END " + std::string(label) + "-----";
            const size_t endAt = region.find(end, labelEnd);
            blocks.push_back({label, endAt == std::string_view::npos
                                         ? std::string_view()  // never closed: not readable
                                         : text.substr(at, kBegin.size() + endAt + end.size())});
        }
        at = next;
    }
    return blocks;
}

bool isPrivateKeyLabel(std::string_view label) {
    static constexpr std::string_view kKey = "PRIVATE KEY";
    return label.size() >= kKey.size() && label.substr(label.size() - kKey.size()) == kKey;
}

using Bio = std::unique_ptr<BIO, void (*)(BIO*)>;
Bio bioOf(std::string_view text) {
    const auto& f = x509Functions();
    return Bio(f.bioNew(text.data(), static_cast<int>(text.size())),
               [](BIO* bio) { x509Functions().bioFree(bio); });
}

X509* certificateOf(std::string_view text) {
    auto bio = bioOf(text);
    return bio ? x509Functions().readCertificate(bio.get(), nullptr, refusePassphrase, nullptr)
               : nullptr;
}

EVP_PKEY* keyOf(std::string_view text) {
    auto bio = bioOf(text);
    return bio ? x509Functions().readKey(bio.get(), nullptr, refusePassphrase, nullptr) : nullptr;
}

// A DER value is one ASN.1 SEQUENCE: its first byte.
bool mayBeDer(std::string_view text) {
    return text.size() >= 16 && static_cast<unsigned char>(text[0]) == 0x30 &&
           text.find("-----BEGIN ") == std::string_view::npos;
}

// What one DER value holds: a certificate, a key, or an encrypted key or PKCS#12 store (a key
// not opened).
struct DerContents {
    std::vector<X509*> certificates;
    EVP_PKEY* key = nullptr;
    bool hadKey = false;  // a key, read or not
};

DerContents readDer(std::string_view text) {
    const auto& f = x509Functions();
    DerContents contents;
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const long size = static_cast<long>(text.size());
    const unsigned char* at = bytes;
    if (X509* certificate = f.certificateFromDer(nullptr, &at, size)) {
        contents.certificates.push_back(certificate);
        return contents;
    }
    at = bytes;
    if (EVP_PKEY* key = f.keyFromDer(nullptr, &at, size)) {
        contents.key = key;
        contents.hadKey = true;
        return contents;
    }
    // An encrypted PKCS#8 key (what `openssl pkcs8 -topk8 -outform DER` writes): not opened.
    at = bytes;
    if (X509_SIG* sealed = f.encryptedKeyFromDer(nullptr, &at, size)) {
        contents.hadKey = true;
        f.encryptedKeyFree(sealed);
        return contents;
    }
    // A PKCS#12 store is not opened: its MAC and key derivations run as many iterations as
    // its writer chose (2^31 is hours of CPU), so it counts as a key that cannot be read.
    at = bytes;
    if (PKCS12* store = f.pkcs12FromDer(nullptr, &at, size)) {
        contents.hadKey = true;
        f.pkcs12Free(store);
    }
    return contents;
}

// Owns what the scan loaded, freed however it ends.
struct Loaded {
    std::vector<X509*> certificates;
    std::vector<X509*> authorities;
    std::vector<EVP_PKEY*> keys;  // null: a key block that did not load
    X509_STORE* store = nullptr;
    OPENSSL_STACK* untrusted = nullptr;
    ~Loaded() {
        const auto& f = x509Functions();
        for (auto* certificate : certificates) f.certificateFree(certificate);
        for (auto* certificate : authorities) f.certificateFree(certificate);
        for (auto* key : keys)
            if (key) f.keyFree(key);
        if (store) f.storeFree(store);
        if (untrusted) f.stackFree(untrusted);
        f.clearErrors();
    }
};

}  // namespace

bool holdsPrivateKeyMaterial(const std::string& text) {
    for (const auto& block : pemBlocks(text))
        if (isPrivateKeyLabel(block.label)) return true;
    if (!mayBeDer(text)) return false;
    const auto& f = x509Functions();
    DerContents contents = readDer(text);
    for (auto* certificate : contents.certificates) f.certificateFree(certificate);
    if (contents.key) f.keyFree(contents.key);
    f.clearErrors();
    return contents.hadKey;
}

PrivateKeyScan scanPrivateKeys(const std::vector<std::string>& texts,
                               const std::string& authoritiesPem,
                               const PrivateKeyScanLimits& limits) {
    PrivateKeyScan scan;
    std::vector<Block> keyBlocks, certificateBlocks;
    std::vector<size_t> keyTexts, derTexts;
    for (size_t index = 0; index < texts.size(); ++index) {
        if (mayBeDer(texts[index])) derTexts.push_back(index);
        for (const auto& block : pemBlocks(texts[index])) {
            if (isPrivateKeyLabel(block.label)) {
                if (keyBlocks.size() == limits.keys) {
                    scan.overLimit = true;
                    continue;
                }
                keyBlocks.push_back(block);
                keyTexts.push_back(index);
            } else if (block.label == "CERTIFICATE" && !block.text.empty()) {
                if (certificateBlocks.size() == limits.certificates) {
                    scan.overLimit = true;
                    continue;
                }
                certificateBlocks.push_back(block);
            }
        }
    }
    if (keyBlocks.empty() && derTexts.empty()) return scan;

    const auto& f = x509Functions();
    Loaded loaded;
    for (const auto& block : keyBlocks)
        loaded.keys.push_back(block.text.empty() ? nullptr : keyOf(block.text));
    loaded.untrusted = f.stackNew();
    auto addCertificate = [&](X509* certificate) {
        if (loaded.certificates.size() == limits.certificates) {
            scan.overLimit = true;
            f.certificateFree(certificate);
            return;
        }
        loaded.certificates.push_back(certificate);
        if (loaded.untrusted) f.stackPush(loaded.untrusted, certificate);
    };
    for (const auto& block : certificateBlocks)
        if (X509* certificate = certificateOf(block.text)) addCertificate(certificate);
    // DER (tls.key and tls.crt written binary) and PKCS#12 (a Java client's keystore).
    for (const size_t index : derTexts) {
        DerContents contents = readDer(texts[index]);
        for (auto* certificate : contents.certificates) addCertificate(certificate);
        if (!contents.hadKey) continue;
        if (keyBlocks.size() == limits.keys) {
            scan.overLimit = true;
            if (contents.key) f.keyFree(contents.key);
            continue;
        }
        keyBlocks.push_back({"DER", texts[index]});
        keyTexts.push_back(index);
        loaded.keys.push_back(contents.key);
    }
    if (keyBlocks.empty()) return scan;
    loaded.store = f.storeNew();
    // Not yet valid or expired, the CA still signed it: a clock (the server's or this one)
    // decides when it opens the cluster, not whether it is a credential.
    // Any certificate of the client CA bundle ends a chain, root or not, as Go's x509 pool (the
    // API server's) takes it.
    if (loaded.store)
        f.storeFlags(loaded.store, X509_V_FLAG_NO_CHECK_TIME | X509_V_FLAG_PARTIAL_CHAIN);
    for (const auto& block : pemBlocks(authoritiesPem))
        if (block.label == "CERTIFICATE" && !block.text.empty())
            if (X509* authority = certificateOf(block.text)) {
                loaded.authorities.push_back(authority);
                if (loaded.store) f.storeAdd(loaded.store, authority);
            }

    // Chain building costs up to depth x untrusted certificates each time; the texts are the
    // pod's (or a hostile server's), so the number of builds is bounded per scan.
    size_t chainBuilds = 0;
    // The same key block twice (copies in several Secrets) is judged once.
    std::map<std::string_view, PrivateKeyFinding> judged;
    for (size_t index = 0; index < loaded.keys.size(); ++index) {
        if (auto seen = judged.find(keyBlocks[index].text);
            seen != judged.end() && !keyBlocks[index].text.empty()) {
            PrivateKeyFinding copy = seen->second;
            copy.text = keyTexts[index];
            scan.keys.push_back(std::move(copy));
            continue;
        }
        EVP_PKEY* key = loaded.keys[index];
        PrivateKeyFinding finding;
        finding.text = keyTexts[index];
        finding.readable = key != nullptr;
        for (X509* certificate : loaded.certificates) {
            if (!key || f.keyMatches(certificate, key) != 1) continue;
            bool signedHere = false;
            if (loaded.store && !loaded.authorities.empty()) {
                if (chainBuilds == limits.chainBuilds) {
                    finding.unjudged = true;
                    break;
                }
                ++chainBuilds;
                X509_STORE_CTX* context = f.contextNew();
                if (context &&
                    f.contextInit(context, loaded.store, certificate,
                                  reinterpret_cast<STACK_OF(X509)*>(loaded.untrusted)) == 1)
                    signedHere = f.verify(context) == 1;
                if (context) f.contextFree(context);
            }
            if (!finding.hasCertificate || signedHere) {
                char subject[256] = "";
                f.nameText(f.subjectName(certificate), subject, sizeof subject);
                finding.subject = subject;
            }
            finding.hasCertificate = true;
            if (signedHere) {
                finding.signedByAuthority = true;
                break;
            }
        }
        f.clearErrors();
        judged.emplace(keyBlocks[index].text, finding);
        scan.keys.push_back(std::move(finding));
    }
    return scan;
}

}  // namespace rossoctl::kube
