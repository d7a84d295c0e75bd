// What a server (or a node, or a pod through them) wrote in a message, made fit to show: no
// internal URL or address, bounded, nothing that steers a terminal.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::kube {

namespace {

// More than any message worth reading; the scrubbing below stays cheap within it.
constexpr size_t kMaxScrubbed = 8 * 1024;
constexpr const char* kAddress = "an internal address";

bool isAlnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool isSpace(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// At most `maxBytes`, cut at a character boundary, "..." marking the cut.
std::string cutAt(std::string text, size_t maxBytes) {
    if (text.size() <= maxBytes) return text;
    size_t cut = maxBytes > 3 ? maxBytes - 3 : 0;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "...";
}

// Within maxBytes, its start and its end: a runtime's error ends with why ("exec: \"x\":
// executable file not found in $PATH"), after IDs and wrappers that fill the start.
std::string cutMiddle(std::string text, size_t maxBytes) {
    if (text.size() <= maxBytes || maxBytes < 16) return cutAt(std::move(text), maxBytes);
    size_t head = (maxBytes - 3) / 2;
    size_t tail = text.size() - (maxBytes - 3 - head);
    while (head > 0 && (static_cast<unsigned char>(text[head]) & 0xC0) == 0x80) --head;
    while (tail < text.size() && (static_cast<unsigned char>(text[tail]) & 0xC0) == 0x80) ++tail;
    return text.substr(0, head) + "..." + text.substr(tail);
}

// What a URL in a server's message names, without its address: the apiserver dials the node's
// kubelet (port 10250) for exec, attach, port-forward and logs.
std::string describeUrl(const std::string& url) {
    const size_t authority = url.find("://") + 3;
    const size_t pathStart = url.find_first_of("/?#", authority);
    const std::string hostPort = url.substr(authority, pathStart - authority);
    std::string path = pathStart == std::string::npos ? "" : url.substr(pathStart);
    path = path.substr(0, path.find_first_of("?#"));
    const std::string first = path.substr(0, path.find('/', 1));
    if (first == "/exec") return "the node's exec endpoint";
    if (first == "/attach") return "the node's attach endpoint";
    if (first == "/portForward") return "the node's port-forward endpoint";
    if (first == "/containerLogs") return "the node's container-log endpoint";
    const size_t colon = hostPort.rfind(':');
    if (colon != std::string::npos && hostPort.substr(colon + 1) == "10250")
        return "the node's kubelet endpoint";
    return "an internal endpoint";
}

std::string withoutUrls(std::string message) {
    for (size_t start = 0; (start = message.find("://", start)) != std::string::npos;) {
        size_t begin = start;
        while (begin > 0 && isAlnum(message[begin - 1])) --begin;
        if (begin == start) {  // no scheme: not a URL
            start += 3;
            continue;
        }
        size_t end = start + 3;
        while (end < message.size() && !isSpace(message[end]) && message[end] != '"' &&
               message[end] != '\'')
            ++end;
        while (end > start + 3 &&
               std::string_view(".,;:)").find(message[end - 1]) != std::string_view::npos)
            --end;               // "Get https://...: dial" (older Go): the colon is the sentence's
        if (end == start + 3) {  // no host: not a URL
            start = end;
            continue;
        }
        const std::string description = describeUrl(message.substr(begin, end - begin));
        // Go quotes the URL it failed on (Get "https://..."): the description is no URL.
        if (begin > 0 && end < message.size() && message[begin - 1] == '"' && message[end] == '"') {
            --begin;
            ++end;
        }
        message.replace(begin, end - begin, description);
        start = begin + description.size();
    }
    return message;
}

// The end of the word at `from`: a space, or a colon that ends a phrase ("10.0.0.5:10250: ").
size_t wordEnd(const std::string& text, size_t from) {
    size_t end = from;
    while (end < text.size() && !isSpace(text[end]) &&
           !(text[end] == ':' && (end + 1 == text.size() || text[end + 1] == ' ')))
        ++end;
    return end;
}

// Go's network errors name both ends: "dial tcp 10.0.0.5:10250: ...", "read tcp A->B: ...",
// "dial unix /run/cri.sock: ...", "lookup ip-10-0-1-5.internal on 10.96.0.10:53: ...". The
// operation stays, the addresses go.
std::string withoutNetAddresses(std::string message) {
    static const std::vector<std::string> operations = [] {
        std::vector<std::string> all;
        for (const char* verb : {"dial ", "read ", "write "})
            for (const char* net : {"tcp", "tcp4", "tcp6", "udp", "udp4", "udp6", "unix"})
                all.push_back(std::string(verb) + net + " ");
        all.push_back("lookup ");
        return all;
    }();
    for (const auto& operation : operations) {
        for (size_t at = 0; (at = message.find(operation, at)) != std::string::npos;) {
            const size_t begin = at + operation.size() - 1;  // the space before the address
            size_t end = wordEnd(message, begin + 1);
            if (operation == "lookup " && message.compare(end, 4, " on ") == 0)
                end = wordEnd(message, end + 4);
            // Only what is an address or path: "lookup failed" keeps its word.
            const std::string word = message.substr(begin + 1, end - begin - 1);
            const bool address =
                word.find_first_of(operation == "lookup " ? ".:" : ":/") != std::string::npos;
            if (address) message.erase(begin, end - begin);
            at = begin;
        }
    }
    // "x509: certificate is valid for ip-10-0-0-5, 10.0.0.5, not api": the node's names go.
    const std::string validFor = "is valid for ";
    for (size_t at = 0; (at = message.find(validFor, at)) != std::string::npos;) {
        const size_t begin = at + validFor.size();
        size_t end = message.find(", not ", begin);
        if (end == std::string::npos) end = wordEnd(message, begin);
        message.replace(begin, end - begin, "other names");
        at = begin;
    }
    return message;
}

bool isIpv4At(const std::string& text, size_t at, size_t& end) {
    size_t i = at;
    for (int part = 0; part < 4; ++part) {
        if (part > 0) {
            if (i >= text.size() || text[i] != '.') return false;
            ++i;
        }
        const size_t digits = i;
        while (i < text.size() && i - digits < 3 &&
               std::isdigit(static_cast<unsigned char>(text[i])))
            ++i;
        if (i == digits) return false;
    }
    if (i < text.size() && text[i] == ':' && i + 1 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
        ++i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    }
    if (i < text.size() && (isAlnum(text[i]) || text[i] == '.')) return false;
    end = i;
    return true;
}

// What the passes above did not recognise: IPv4 literals (with a port) and bracketed IPv6.
std::string withoutAddressLiterals(const std::string& message) {
    std::string out;
    out.reserve(message.size());
    for (size_t i = 0; i < message.size();) {
        const bool wordStart = i == 0 || !(isAlnum(message[i - 1]) || message[i - 1] == '.');
        size_t end = 0;
        if (wordStart && std::isdigit(static_cast<unsigned char>(message[i])) &&
            isIpv4At(message, i, end)) {
            out += kAddress;
            i = end;
            continue;
        }
        if (message[i] == '[') {
            const size_t close = message.find(']', i);
            std::string inside =
                close == std::string::npos ? "" : message.substr(i + 1, close - i - 1);
            inside = inside.substr(0, inside.find('%'));  // fe80::1%eth0: the zone is a name
            if (inside.size() >= 2 && inside.size() <= 45 &&
                inside.find(':') != std::string::npos &&
                inside.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos) {
                out += kAddress;
                i = close + 1;
                if (i < message.size() && message[i] == ':')
                    while (++i < message.size() &&
                           std::isdigit(static_cast<unsigned char>(message[i]))) {
                    }
                continue;
            }
        }
        out += message[i++];
    }
    return out;
}

// The apiserver wraps an exec failure the kubelet already wrapped: "Internal error occurred:
// Internal error occurred: error executing command ...". Said once, as it means one thing.
std::string withoutRepeatedWrapper(std::string message) {
    static constexpr std::string_view kWrapper = "Internal error occurred: ";
    std::string doubled = std::string(kWrapper) + std::string(kWrapper);
    for (size_t at; (at = message.find(doubled)) != std::string::npos;)
        message.erase(at, kWrapper.size());
    return message;
}

// The length of the valid UTF-8 character at `at`, or 0 when the bytes there are none.
size_t utf8Length(const std::string& text, size_t at) {
    const auto lead = static_cast<unsigned char>(text[at]);
    const size_t length = lead < 0x80                    ? 1
                          : lead >= 0xc2 && lead <= 0xdf ? 2
                          : lead >= 0xe0 && lead <= 0xef ? 3
                          : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                         : 0;
    if (length == 0 || at + length > text.size()) return 0;
    for (size_t i = 1; i < length; ++i)
        if ((static_cast<unsigned char>(text[at + i]) & 0xC0) != 0x80) return 0;
    return length;
}

}  // namespace

std::string scrubServerMessage(std::string message) {
    message = cutAt(std::move(message), kMaxScrubbed);
    return withoutRepeatedWrapper(
        withoutAddressLiterals(withoutNetAddresses(withoutUrls(std::move(message)))));
}

std::string boundedServerMessage(std::string message, size_t maxBytes) {
    message = scrubServerMessage(std::move(message));
    // Nothing that steers a terminal: C0 and C1 controls (raw or as UTF-8), DEL, bidi
    // overrides and bytes that are no UTF-8 become spaces.
    std::string shown;
    for (size_t i = 0; i < message.size();) {
        const size_t length = utf8Length(message, i);
        const auto c = static_cast<unsigned char>(message[i]);
        const auto next = length > 1 ? static_cast<unsigned char>(message[i + 1]) : 0;
        const auto third = length > 2 ? static_cast<unsigned char>(message[i + 2]) : 0;
        const bool control = length == 0 || c < 0x20 || c == 0x7f || (c == 0xc2 && next <= 0x9f) ||
                             (c == 0xe2 && ((next == 0x80 && third >= 0xaa && third <= 0xae) ||
                                            (next == 0x81 && third >= 0xa6 && third <= 0xa9)));
        if (control)
            shown += ' ';  // U+202A..202E and U+2066..2069 among them
        else
            shown.append(message, i, length);
        i += length == 0 ? 1 : length;
    }
    return cutMiddle(std::move(shown), maxBytes);
}

}  // namespace rossoctl::kube
