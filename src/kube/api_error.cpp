#include "rossoctl/kube/api_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>

#include "rossoctl/kube/json_depth.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/terminal_escape.hpp"

namespace rossoctl::kube {

namespace {

std::string reasonForStatus(long status) {
    switch (status) {
        case 400:
            return "BadRequest";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "NotFound";
        case 405:
            return "MethodNotAllowed";
        case 406:
            return "NotAcceptable";
        case 409:
            return "Conflict";
        case 410:
            return "Gone";
        case 413:
            return "RequestEntityTooLarge";
        case 415:
            return "UnsupportedMediaType";
        case 422:
            return "Invalid";
        case 429:
            return "TooManyRequests";
        case 500:
            return "InternalError";
        case 503:
            return "ServiceUnavailable";
        case 504:
            return "Timeout";
        default:
            return "Unknown";
    }
}

std::string httpStatusText(long status) {
    std::string_view phrase = httpReasonPhrase(status);
    return phrase.empty() ? std::string("Unknown") : std::string(phrase);
}

// client-go's wording for a failure that came without a Status body.
std::string genericMessage(long status) {
    switch (status) {
        case 401:
            return "the server has asked for the client to provide credentials";
        case 403:
            return "the server does not allow access to the requested resource";
        case 404:
            return "the server could not find the requested resource";
        case 405:
            return "the server does not allow this method on the requested resource";
        case 409:
            return "the server reported a conflict";
        case 410:
            return "the server has expired the requested resource";
        case 413:
            return "the server has rejected the request because it is too large";
        case 415:
            return "the server responded with the status code 415 (Unsupported Media Type)";
        case 422:
            return "the server rejected our request due to an error in our request";
        case 429:
            return "the server has received too many requests and has asked us to try again "
                   "later";
        case 503:
            return "the server is currently unable to handle the request";
        case 504:
            return "the server was unable to return a response in the time allotted, but may "
                   "still be processing the request";
        default:
            if (status >= 500) {
                return fmt::format(
                    "an error on the server ({}) has prevented the request from succeeding",
                    httpStatusText(status));
            }
            return fmt::format("the server responded with the status code {} ({})", status,
                               httpStatusText(status));
    }
}

// The first 80 printable characters, whitespace runs collapsed: enough to recognise an HTML
// error page without flooding the terminal or echoing control characters.
std::string printableExcerpt(const std::string& body) {
    std::string out;
    bool lastWasSpace = true;
    for (unsigned char c : body) {
        if (out.size() >= 80) break;
        if (std::isspace(c)) {
            if (!lastWasSpace) out += ' ';
            lastWasSpace = true;
        } else if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
            lastWasSpace = false;
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

std::string stringField(const nlohmann::json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

std::vector<StatusCause> causesOf(const nlohmann::json& details) {
    std::vector<StatusCause> causes;
    if (!details.is_object()) return causes;
    auto it = details.find("causes");
    if (it == details.end() || !it->is_array()) return causes;
    for (const auto& cause : *it) {
        if (!cause.is_object()) continue;
        causes.push_back(
            StatusCause{escapeErrorLine(stringField(cause, "reason")),
                        escapeErrorLine(scrubServerMessage(stringField(cause, "message"))),
                        escapeErrorLine(stringField(cause, "field"))});
    }
    return causes;
}

bool looksLikeStatus(const nlohmann::json& body) {
    if (!body.is_object()) return false;
    if (stringField(body, "kind") == "Status") return true;
    return body.contains("status") && body.contains("reason") && body.contains("message");
}

}  // namespace

ApiError::ApiError(long code, std::string reason, std::string message,
                   std::vector<StatusCause> causes, nlohmann::json details)
    : Error(message),
      code_(code),
      reason_(std::move(reason)),
      message_(std::move(message)),
      causes_(std::move(causes)),
      details_(std::move(details)) {}

ApiError apiErrorFromResponse(long httpStatus, const std::string& body) {
    // Too deep to copy safely: read as a body that is no Status (an excerpt).
    nlohmann::json parsed = nestsDeeperThan(body)
                                ? nlohmann::json()
                                : nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (looksLikeStatus(parsed)) {
        long code = httpStatus;
        if (auto it = parsed.find("code"); it != parsed.end() && it->is_number_integer()) {
            code = it->get<long>();
        }
        // The server's words reach every path that prints an error, not all of them the main
        // handler: escaped here, once, into one line each.
        std::string reason = escapeErrorLine(stringField(parsed, "reason").substr(0, 100));
        if (reason.empty()) reason = reasonForStatus(code);
        std::string message = escapeErrorLine(scrubServerMessage(stringField(parsed, "message")));
        if (message.empty()) message = genericMessage(code);
        nlohmann::json details = parsed.value("details", nlohmann::json::object());
        return ApiError(code, std::move(reason), std::move(message), causesOf(details), details);
    }
    std::string excerpt = printableExcerpt(body);
    std::string message = excerpt.empty() ? genericMessage(httpStatus)
                                          : fmt::format(
                                                "the server responded with status {} ({}) and a "
                                                "non-Kubernetes body: {}",
                                                httpStatus, httpStatusText(httpStatus), excerpt);
    return ApiError(httpStatus, reasonForStatus(httpStatus), std::move(message), {});
}

}  // namespace rossoctl::kube
