#pragma once
// What the request and upgrade paths of the libcurl transport share: connection settings
// taken from the RestConfig, TLS/proxy options, and CURLcode -> TransportError mapping.
#include <memory>
#include <optional>
#include <string>

#include "curl_library.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/transport.hpp"

namespace rossoctl::kube::curl {

struct EasyDeleter {
    void operator()(CURL* easy) const { libcurl::curl_easy_cleanup(easy); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
    void operator()(curl_slist* list) const { libcurl::curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

EasyHandle newEasyHandle();

// The TLS identity and route of every connection to one apiserver.
struct ConnectionSettings {
    std::string caData;
    std::string tlsServerName;
    std::string proxyUrl;
    bool insecureSkipTlsVerify = false;
    std::optional<ClientCertificate> clientCertificate;

    static ConnectionSettings fromConfig(const RestConfig& config);
};

// The URL curl is given and what keeps its options alive until the transfer ends.
struct PreparedConnection {
    std::string url;
    Slist connectTo;
};

// TLS, proxy, tls-server-name, keepalive and connect timeout on a freshly reset handle.
// tls-server-name: the URL's host is replaced by that name (so SNI and certificate checks
// use it) and CURLOPT_CONNECT_TO routes the connection to the real host and port.
PreparedConnection applyConnectionOptions(CURL* easy, const ConnectionSettings& settings,
                                          const std::string& url,
                                          std::chrono::milliseconds timeout);

// "host:port" of a URL, for messages.
std::string hostAndPort(const std::string& url);

// errorBuffer is curl's CURLOPT_ERRORBUFFER text (may be empty).
TransportError transportErrorFor(CURL* easy, CURLcode code, const char* errorBuffer,
                                 const std::string& url);

// The CONNECT_ONLY path of Transport::upgrade (curl_upgrade.cpp).
std::unique_ptr<UpgradedConnection> openUpgradedConnection(const ConnectionSettings& settings,
                                                           const HttpRequest& request,
                                                           const CancelFlag* cancel);

}  // namespace rossoctl::kube::curl
