#pragma once
// Private keys found in PEM text, and whether a certificate beside them makes them a client
// credential of a cluster: libcrypto, loaded on first use.
#include <string>
#include <vector>

namespace rossoctl::kube {

// One "-----BEGIN ... PRIVATE KEY-----" block of the texts given, and what stands behind it.
struct PrivateKeyFinding {
    size_t text = 0;                 // which of the texts holds it
    bool readable = false;           // false: encrypted, OpenSSH's format, or broken
    bool hasCertificate = false;     // a certificate of the texts holds its public key
    bool signedByAuthority = false;  // ... and chains (through the texts' others) to one
    std::string subject;             // that certificate's subject (the pod wrote it)
};

// Every private key in `texts`, each paired with the certificates of all of them; a chain is
// verified against `authoritiesPem` (no authority: nothing is signed). At most maxKeys keys and
// maxCertificates certificates are read; `overLimit` says when more were there.
struct PrivateKeyScan {
    std::vector<PrivateKeyFinding> keys;
    bool overLimit = false;
};
PrivateKeyScan scanPrivateKeys(const std::vector<std::string>& texts,
                               const std::string& authoritiesPem, size_t maxKeys = 64,
                               size_t maxCertificates = 1024);

// Whether `text` holds the opening line of a PEM private key (any kind, encrypted or not).
bool holdsPrivateKeyBlock(const std::string& text);

}  // namespace rossoctl::kube
