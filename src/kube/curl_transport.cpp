// The libcurl Transport. One easy handle per transport, reset between requests: reset keeps
// its connection cache, so consecutive requests reuse the same TLS (often HTTP/2) connection.
// A transport, like the Client that owns it, is used by one thread at a time.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <exception>

#include "curl_common.hpp"

namespace rossoctl::kube {

namespace {

// State the C callbacks of one transfer share; exceptions are stored, never thrown into curl.
struct Transfer {
    const HttpRequest* request = nullptr;
    const CancelFlag* cancel = nullptr;
    HttpResponse response;
    bool stoppedByReader = false;
    std::exception_ptr failure;
};

size_t onHeader(char* data, size_t size, size_t count, void* userdata) {
    auto& transfer = *static_cast<Transfer*>(userdata);
    std::string_view line(data, size * count);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {
        // A new status line (after 100 Continue, say) starts a new set of headers.
        transfer.response.headers.clear();
        size_t space = line.find(' ');
        transfer.response.status = space == std::string_view::npos
                                       ? 0
                                       : std::atol(std::string(line.substr(space + 1)).c_str());
        return size * count;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return size * count;
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    transfer.response.headers.emplace_back(std::move(name), std::string(value));
    return size * count;
}

size_t onBody(char* data, size_t size, size_t count, void* userdata) {
    auto& transfer = *static_cast<Transfer*>(userdata);
    const size_t bytes = size * count;
    const long status = transfer.response.status;
    // Only a successful response streams; an error's body is kept for its Status.
    if (transfer.request->onBodyChunk && status >= 200 && status < 300) {
        try {
            if (!transfer.request->onBodyChunk(std::string_view(data, bytes))) {
                transfer.stoppedByReader = true;
                return 0;
            }
        } catch (...) {
            transfer.failure = std::current_exception();
            return 0;
        }
        return bytes;
    }
    const bool success = status >= 200 && status < 300;
    const size_t cap = success ? transfer.request->maxBodyBytes : kMaxErrorBodyBytes;
    if (transfer.response.body.size() + bytes > cap) {
        if (!success) {
            // Enough of an error's body for its Status; the rest is not read.
            transfer.response.body.append(data, cap - transfer.response.body.size());
            transfer.stoppedByReader = true;
            return 0;
        }
        transfer.failure = std::make_exception_ptr(TransportError(
            TransportError::Kind::Other,
            fmt::format("the server's answer to {} {} is over {} MiB; refused",
                        transfer.request->method, transfer.request->url, cap >> 20)));
        return 0;
    }
    transfer.response.body.append(data, bytes);
    return bytes;
}

int onProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto& transfer = *static_cast<Transfer*>(userdata);
    return transfer.cancel && transfer.cancel->cancelled() ? 1 : 0;
}

void setMethodAndBody(CURL* easy, const HttpRequest& request) {
    const std::string& method = request.method;
    if (method == "GET") {
        libcurl::curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
        return;
    }
    if (method == "HEAD") {
        libcurl::curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
        return;
    }
    if (!request.body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        libcurl::curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                                  static_cast<curl_off_t>(request.body.size()));
        libcurl::curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    }
    if (method != "POST") libcurl::curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
}

class CurlTransport : public Transport {
  public:
    CurlTransport(const RestConfig& config, const CancelFlag* cancel)
        : settings_(curl::ConnectionSettings::fromConfig(config)),
          cancel_(cancel),
          easy_(curl::newEasyHandle()) {}

    HttpResponse send(const HttpRequest& request) override {
        CURL* easy = easy_.get();
        libcurl::curl_easy_reset(easy);
        char errorBuffer[CURL_ERROR_SIZE] = {};
        libcurl::curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errorBuffer);
        curl::PreparedConnection connection =
            curl::applyConnectionOptions(easy, settings_, request.url, request.timeout);
        libcurl::curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
        libcurl::curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
        setMethodAndBody(easy, request);

        // "Expect:" with no value stops curl from waiting for 100-continue on large bodies.
        curl_slist* headerList = libcurl::curl_slist_append(nullptr, "Expect:");
        for (const auto& [name, value] : request.headers) {
            std::string line = fmt::format("{}: {}", name, value);
            if (curl_slist* grown = libcurl::curl_slist_append(headerList, line.c_str()))
                headerList = grown;
        }
        curl::Slist headers(headerList);
        libcurl::curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());

        Transfer transfer;
        transfer.request = &request;
        transfer.cancel = cancel_;
        libcurl::curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, onHeader);
        libcurl::curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
        libcurl::curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, onBody);
        libcurl::curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
        libcurl::curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, onProgress);
        libcurl::curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &transfer);
        libcurl::curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);

        CURLcode code = libcurl::curl_easy_perform(easy);
        // Options point into locals; clear them so the handle holds nothing dangling.
        libcurl::curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
        libcurl::curl_easy_setopt(easy, CURLOPT_CONNECT_TO, nullptr);
        libcurl::curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
        if (transfer.failure) std::rethrow_exception(transfer.failure);
        if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && transfer.stoppedByReader)) {
            throw curl::transportErrorFor(easy, code, errorBuffer, request.url);
        }
        long status = 0;
        libcurl::curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        if (status != 0) transfer.response.status = status;
        return std::move(transfer.response);
    }

    std::unique_ptr<UpgradedConnection> upgrade(const HttpRequest& request) override {
        return curl::openUpgradedConnection(settings_, request, cancel_);
    }

    void setClientCertificate(const ClientCertificate& certificate) override {
        settings_.clientCertificate = certificate;
    }

  private:
    curl::ConnectionSettings settings_;
    const CancelFlag* cancel_;
    curl::EasyHandle easy_;
};

}  // namespace

std::unique_ptr<Transport> makeCurlTransport(const RestConfig& config, const CancelFlag* cancel) {
    return std::make_unique<CurlTransport>(config, cancel);
}

}  // namespace rossoctl::kube
