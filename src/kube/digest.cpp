#include "rossoctl/kube/digest.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "rossoctl/errors.hpp"
#include "shared_library.hpp"

namespace rossoctl::kube {

namespace {

struct Crypto {
    decltype(&::SHA1) sha1;
    decltype(&::EVP_MD_CTX_new) contextNew;
    decltype(&::EVP_MD_CTX_free) contextFree;
    decltype(&::EVP_sha256) sha256;
    decltype(&::EVP_DigestInit_ex) digestInit;
    decltype(&::EVP_DigestUpdate) digestUpdate;
    decltype(&::EVP_DigestFinal_ex) digestFinal;
};

const Crypto& crypto() {
    static const SharedLibrary library("libcrypto.so.3", "libssl3");
    static const Crypto loaded{
        library.function<decltype(Crypto::sha1)>("SHA1"),
        library.function<decltype(Crypto::contextNew)>("EVP_MD_CTX_new"),
        library.function<decltype(Crypto::contextFree)>("EVP_MD_CTX_free"),
        library.function<decltype(Crypto::sha256)>("EVP_sha256"),
        library.function<decltype(Crypto::digestInit)>("EVP_DigestInit_ex"),
        library.function<decltype(Crypto::digestUpdate)>("EVP_DigestUpdate"),
        library.function<decltype(Crypto::digestFinal)>("EVP_DigestFinal_ex"),
    };
    return loaded;
}

EVP_MD_CTX* evp(void* context) {
    return static_cast<EVP_MD_CTX*>(context);
}

}  // namespace

std::string sha1(std::string_view bytes) {
    unsigned char digest[SHA_DIGEST_LENGTH];
    crypto().sha1(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
    return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

Sha256::Sha256() : context_(crypto().contextNew()) {
    if (!context_ || crypto().digestInit(evp(context_), crypto().sha256(), nullptr) != 1)
        throw Error("sha256: OpenSSL could not start a digest");
}

Sha256::~Sha256() {
    crypto().contextFree(evp(context_));
}

void Sha256::update(std::string_view bytes) {
    crypto().digestUpdate(evp(context_), bytes.data(), bytes.size());
}

std::string Sha256::hexDigest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    crypto().digestFinal(evp(context_), digest, &length);
    std::string out;
    for (unsigned i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
    return out;
}

}  // namespace rossoctl::kube
