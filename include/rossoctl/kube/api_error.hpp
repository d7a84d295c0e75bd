#pragma once
// ApiError: a metav1.Status failure from the apiserver, worded like kubectl's messages.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/errors.hpp"

namespace rossoctl::kube {

struct StatusCause {
    std::string reason;
    std::string message;
    std::string field;
};

class ApiError : public Error {
  public:
    ApiError(long code, std::string reason, std::string message, std::vector<StatusCause> causes,
             nlohmann::json details = {});
    long code() const { return code_; }
    const std::string& reason() const { return reason_; }
    const std::string& statusMessage() const { return message_; }
    const std::vector<StatusCause>& causes() const { return causes_; }
    const nlohmann::json& details() const { return details_; }
    bool isNotFound() const { return code_ == 404; }
    bool isConflict() const { return code_ == 409 && reason_ == "Conflict"; }
    // The quota admission lost a race on the ResourceQuota (details.kind resourcequotas):
    // nothing was stored, and the Client has already sent it again (retry.hpp).
    bool isQuotaConflict() const {
        if (!isConflict() || !details_.is_object()) return false;
        const auto kind = details_.find("kind");
        return kind != details_.end() && *kind == "resourcequotas";
    }
    bool isAlreadyExists() const { return code_ == 409 && reason_ == "AlreadyExists"; }
    bool isForbidden() const { return code_ == 403; }

  private:
    long code_;
    std::string reason_;
    std::string message_;
    std::vector<StatusCause> causes_;
    nlohmann::json details_;
};

// A server's message as the user may see it: each URL replaced by what it names ("the node's
// exec endpoint"; "an internal endpoint" for one it cannot tell), and the address after
// "dial tcp" dropped. The apiserver quotes the URL it dialed: the node's address and, for exec,
// the whole command in its query.
std::string scrubServerMessage(std::string message);
// scrubServerMessage, control characters made spaces, and at most maxBytes (its start and its
// end, where a runtime says why, "..." marking the cut): for text the other side of a stream
// writes freely (exec's status channel).
std::string boundedServerMessage(std::string message, size_t maxBytes);

// Builds the error from a response: a Status body when there is one, else the HTTP status
// and a short, safe excerpt of what the server sent (an HTML error page, say).
ApiError apiErrorFromResponse(long httpStatus, const std::string& body);

}  // namespace rossoctl::kube
