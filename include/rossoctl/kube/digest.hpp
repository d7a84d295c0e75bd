#pragma once
// SHA-1 and SHA-256 from libcrypto, loaded on first use rather than at start-up.
#include <string>
#include <string_view>

namespace rossoctl::kube {

// The 20 raw bytes of SHA-1 (the WebSocket handshake's accept key needs no more).
std::string sha1(std::string_view bytes);

// SHA-256 of bytes given in pieces; hexDigest() ends it.
class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::string_view bytes);
    std::string hexDigest();

  private:
    void* context_;  // EVP_MD_CTX, kept out of this header with OpenSSL's
};

}  // namespace rossoctl::kube
