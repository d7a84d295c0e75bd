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
    bool unjudged = false;           // not signed as far as checked; the chain budget ran out
    std::string subject;             // that certificate's subject (the pod wrote it)
};

struct PrivateKeyScan {
    std::vector<PrivateKeyFinding> keys;
    bool overLimit = false;
};

// What one scan reads and does at most: the texts are the pod's, so its work is bounded.
struct PrivateKeyScanLimits {
    size_t keys = 64;
    size_t certificates = 1024;
    size_t chainBuilds = 32;  // each verifies one (key, certificate) pair against the CA
};

// Every private key in `texts`, each paired with the certificates of all of them; a chain is
// verified (validity dates aside) against `authoritiesPem` (no authority: nothing is signed).
// `overLimit` says when more keys or certificates were there than the limits read.
PrivateKeyScan scanPrivateKeys(const std::vector<std::string>& texts,
                               const std::string& authoritiesPem,
                               const PrivateKeyScanLimits& limits = {});

// Whether `text` holds the opening line of a PEM private key (any kind, encrypted or not).
bool holdsPrivateKeyBlock(const std::string& text);

}  // namespace rossoctl::kube
