#include "curl_common.hpp"

#include <fmt/format.h>

#include <cerrno>

namespace rossoctl::kube::curl {

namespace {

constexpr long kConnectTimeoutMs = 30000;
constexpr long kKeepAliveSeconds = 30;

struct UrlDeleter {
    void operator()(CURLU* url) const { libcurl::curl_url_cleanup(url); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

std::string urlPart(CURLU* url, CURLUPart part, unsigned int flags = 0) {
    char* value = nullptr;
    if (libcurl::curl_url_get(url, part, &value, flags) != CURLUE_OK || value == nullptr) return {};
    std::string copy(value);
    libcurl::curl_free(value);
    return copy;
}

void setBlob(CURL* easy, CURLoption option, const std::string& data) {
    curl_blob blob{const_cast<char*>(data.data()), data.size(), CURL_BLOB_COPY};
    libcurl::curl_easy_setopt(easy, option, &blob);
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// Go's x509 wording, which users of kubectl search for, with curl's own text after it.
std::string describeVerifyFailure(const std::string& detail, const std::string& host) {
    std::string what = "tls: failed to verify certificate: ";
    if (contains(detail, "does not match") || contains(detail, "no alternative certificate")) {
        // curl quotes the name it checked last: the tls-server-name when one is set.
        size_t close = detail.rfind('\'');
        size_t open = close == std::string::npos ? close : detail.rfind('\'', close - 1);
        std::string checked =
            open == std::string::npos ? host : detail.substr(open + 1, close - open - 1);
        what += fmt::format("x509: certificate is not valid for {}", checked);
    } else if (contains(detail, "expired") || contains(detail, "not yet valid")) {
        what += "x509: certificate has expired or is not yet valid";
    } else {
        what += "x509: certificate signed by unknown authority";
    }
    return what + (detail.empty() ? "" : " (" + detail + ")");
}

}  // namespace

EasyHandle newEasyHandle() {
    // Once per process, before the first handle (the static's initialisation is thread-safe);
    // here and not in main, so libcurl stays inside kube.
    static const CURLcode initialised = libcurl::curl_global_init(CURL_GLOBAL_DEFAULT);
    if (initialised != CURLE_OK)
        throw TransportError(TransportError::Kind::Other, "libcurl could not initialise");
    EasyHandle easy(libcurl::curl_easy_init());
    if (!easy) throw TransportError(TransportError::Kind::Other, "libcurl could not start");
    return easy;
}

ConnectionSettings ConnectionSettings::fromConfig(const RestConfig& config) {
    ConnectionSettings settings;
    settings.caData = config.caData;
    settings.tlsServerName = config.tlsServerName;
    settings.proxyUrl = config.proxyUrl;
    settings.insecureSkipTlsVerify = config.insecureSkipTlsVerify;
    if (!config.clientCertData.empty() && !config.clientKeyData.empty()) {
        settings.clientCertificate = ClientCertificate{config.clientCertData, config.clientKeyData};
    }
    return settings;
}

PreparedConnection applyConnectionOptions(CURL* easy, const ConnectionSettings& settings,
                                          const std::string& url,
                                          std::chrono::milliseconds timeout) {
    PreparedConnection prepared{url, nullptr};
    if (!settings.tlsServerName.empty()) {
        UrlHandle parsed(libcurl::curl_url());
        if (parsed &&
            libcurl::curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
            std::string host = urlPart(parsed.get(), CURLUPART_HOST);
            std::string port = urlPart(parsed.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
            if (libcurl::curl_url_set(parsed.get(), CURLUPART_HOST, settings.tlsServerName.c_str(),
                                      0) == CURLUE_OK) {
                prepared.url = urlPart(parsed.get(), CURLUPART_URL);
                std::string route =
                    fmt::format("{}:{}:{}:{}", settings.tlsServerName, port, host, port);
                prepared.connectTo.reset(libcurl::curl_slist_append(nullptr, route.c_str()));
                libcurl::curl_easy_setopt(easy, CURLOPT_CONNECT_TO, prepared.connectTo.get());
            }
        }
    }
    libcurl::curl_easy_setopt(easy, CURLOPT_URL, prepared.url.c_str());
    libcurl::curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "https,http");
    libcurl::curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    libcurl::curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    libcurl::curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, kKeepAliveSeconds);
    libcurl::curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, kKeepAliveSeconds);
    libcurl::curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    if (timeout.count() > 0) {
        libcurl::curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    }
    if (settings.insecureSkipTlsVerify) {
        libcurl::curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        libcurl::curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!settings.caData.empty()) {
        // Only the cluster's CA, as kubectl: the system bundle must not vouch for it.
        libcurl::curl_easy_setopt(easy, CURLOPT_CAINFO, nullptr);
        libcurl::curl_easy_setopt(easy, CURLOPT_CAPATH, nullptr);
        setBlob(easy, CURLOPT_CAINFO_BLOB, settings.caData);
    }
    if (settings.clientCertificate) {
        libcurl::curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
        setBlob(easy, CURLOPT_SSLCERT_BLOB, settings.clientCertificate->certPem);
        libcurl::curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
        setBlob(easy, CURLOPT_SSLKEY_BLOB, settings.clientCertificate->keyPem);
    }
    // Without an explicit proxy-url libcurl reads HTTPS_PROXY and NO_PROXY itself.
    if (!settings.proxyUrl.empty()) {
        libcurl::curl_easy_setopt(easy, CURLOPT_PROXY, settings.proxyUrl.c_str());
    }
    return prepared;
}

std::string hostAndPort(const std::string& url) {
    UrlHandle parsed(libcurl::curl_url());
    if (!parsed ||
        libcurl::curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
        return url;
    }
    return urlPart(parsed.get(), CURLUPART_HOST) + ":" +
           urlPart(parsed.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
}

TransportError transportErrorFor(CURL* easy, CURLcode code, const char* errorBuffer,
                                 const std::string& url) {
    using Kind = TransportError::Kind;
    std::string detail =
        errorBuffer && *errorBuffer ? errorBuffer : libcurl::curl_easy_strerror(code);
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
    const std::string server = hostAndPort(url);
    const std::string prefix = "Unable to connect to the server: ";
    long osErrno = 0;
    if (easy) libcurl::curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &osErrno);

    switch (code) {
        case CURLE_ABORTED_BY_CALLBACK:
            return TransportError(Kind::Cancelled, "interrupted");
        case CURLE_COULDNT_CONNECT:
            if (osErrno == ECONNREFUSED) {
                return TransportError(Kind::Connect,
                                      fmt::format("The connection to the server {} was refused - "
                                                  "did you specify the right host or port?",
                                                  server));
            }
            return TransportError(Kind::Connect, prefix + detail);
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_PROXY:
            return TransportError(Kind::Connect, prefix + detail);
        case CURLE_OPERATION_TIMEDOUT:
            return TransportError(Kind::Timeout, fmt::format("{}the request to {} timed out ({})",
                                                             prefix, server, detail));
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
            return TransportError(Kind::Reset, fmt::format("{}the connection to {} was reset ({})",
                                                           prefix, server, detail));
        case CURLE_PEER_FAILED_VERIFICATION:
            return TransportError(Kind::Tls, prefix + describeVerifyFailure(detail, server));
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CLIENTCERT:
            return TransportError(
                Kind::Tls,
                prefix + "the client certificate or key cannot be used (" + detail + ")");
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_CRL_BADFILE:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_INVALIDCERTSTATUS:
        case CURLE_SSL_ENGINE_INITFAILED:
            if (contains(detail, "certificate problem")) {
                return TransportError(Kind::Tls, prefix + describeVerifyFailure(detail, server));
            }
            return TransportError(Kind::Tls, prefix + "TLS handshake failed (" + detail + ")");
        default:
            return TransportError(Kind::Other, prefix + detail);
    }
}

}  // namespace rossoctl::kube::curl
