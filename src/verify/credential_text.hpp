#pragma once
// Text a credential hides in without being encoded: string escapes kubectl and YAML undo, and a
// token's parts (its claims without its header) that a pod puts back together.
#include <optional>
#include <string>
#include <string_view>

#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

// `text` with JSON string escapes (\uXXXX with surrogate pairs, \/ \n ...), YAML double-quoted
// ones (\xXX, \UXXXXXXXX, an escaped line break) and URL %XX undone; nullopt when none is there.
// One pass, never longer than `text`.
std::optional<std::string> unescaped(std::string_view text);

// A token's part by its claims: a base64url run starting eyJ (with or without a signature after
// it) or a JSON object in `text` whose claims are a JWT's, judged as a whole JWT of that issuer
// is; or "iss" naming this cluster's issuer anywhere. Pass when there is none. Linear.
CredentialShape tokenPartShape(std::string_view text, const std::string& clusterIssuer);

// Whose a JWT is by its claims (the shape check of a whole token); `prefix` opens the evidence
// ("the claims of " for a part).
CredentialShape claimsShape(const nlohmann::json& claims, const std::string& clusterIssuer,
                            std::string_view prefix = "");

// A JWT's claims (its middle part, base64url without padding), or null.
nlohmann::json jwtClaims(std::string_view payload);

}  // namespace rossoctl::verify
