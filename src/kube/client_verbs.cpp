// The typed verbs of Client: paths, query parameters, bodies, paging and watch streams.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <string>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::kube {

namespace {

class Query {
  public:
    void add(std::string_view key, std::string_view value) {
        if (value.empty()) return;
        text_ += text_.empty() ? '?' : '&';
        text_ += key;
        text_ += '=';
        text_ += urlEncode(value);
    }
    void addWriteOptions(const WriteOptions& options) {
        if (options.dryRun) add("dryRun", "All");
        add("fieldManager", options.fieldManager);
    }
    const std::string& text() const { return text_; }

  private:
    std::string text_;
};

Query listQuery(const ListOptions& options) {
    Query query;
    query.add("labelSelector", options.labelSelector);
    query.add("fieldSelector", options.fieldSelector);
    if (options.limit > 0) query.add("limit", std::to_string(options.limit));
    query.add("continue", options.continueToken);
    query.add("resourceVersion", options.resourceVersion);
    query.add("resourceVersionMatch", options.resourceVersionMatch);
    return query;
}

std::string metadataField(const json& object, const char* field) {
    auto metadata = object.find("metadata");
    if (metadata == object.end() || !metadata->is_object()) return {};
    auto value = metadata->find(field);
    return value != metadata->end() && value->is_string() ? value->get<std::string>()
                                                          : std::string{};
}

std::string requireName(const json& object, const ResourceRef& ref) {
    std::string name = metadataField(object, "name");
    if (name.empty()) {
        throw UsageError(fmt::format("the {} object has no metadata.name", ref.kind));
    }
    return name;
}

// The namespace argument wins; else the object's own; cluster-scoped resources get none.
std::string namespaceFor(const ResourceRef& ref, const std::string& ns, const json& object) {
    if (!ref.namespaced) return {};
    return ns.empty() ? metadataField(object, "namespace") : ns;
}

const char* contentTypeOf(PatchType type) {
    switch (type) {
        case PatchType::Json:
            return "application/json-patch+json";
        case PatchType::Merge:
            return "application/merge-patch+json";
        case PatchType::Apply:
            return "application/apply-patch+yaml";
    }
    return "application/json";
}

}  // namespace

json Client::get(const ResourceRef& ref, const std::string& ns, const std::string& name) {
    return getPath(objectPath(ref, ns, name), kMaxObjectBodyBytes);
}

std::optional<json> Client::getIfExists(const ResourceRef& ref, const std::string& ns,
                                        const std::string& name) {
    try {
        return get(ref, ns, name);
    } catch (const ApiError& error) {
        if (error.isNotFound()) return std::nullopt;
        throw;
    }
}

void Client::listPages(const ResourceRef& ref, const std::string& ns, ListOptions options,
                       const std::function<bool(const json& page)>& onPage) {
    pagesOf(
        ref, ns, std::move(options), [&](json& page) { return onPage(page); },
        std::numeric_limits<size_t>::max());
}

void Client::pagesOf(const ResourceRef& ref, const std::string& ns, ListOptions options,
                     const std::function<bool(json& page)>& onPage, size_t maxTotalBytes) {
    size_t totalBytes = 0;
    // Every caller keeps something of each page (a row, an item): all pages' objects together
    // stay within one document's memory bound, however many pages a server makes up.
    size_t totalMemory = 0;
    // The whole list has a deadline as well as each page: the default one, or --request-timeout
    // when it is longer, so a server cannot hold a list for 10,000 pages times the flag.
    const auto start = clock_.monotonic();
    const std::chrono::milliseconds listBudget =
        std::max(config_.requestTimeout, kBufferedRequestTimeout);
    for (size_t pages = 1;; ++pages) {
        if (pages > kMaxListPages)
            throw Error(fmt::format("the server's list of {} goes on past {} pages; refused",
                                    ref.resource, kMaxListPages));
        HttpRequest request =
            prepare("GET", collectionPath(ref, ns) + listQuery(options).text(), {}, {});
        const auto left = listBudget - std::chrono::duration_cast<std::chrono::milliseconds>(
                                           clock_.monotonic() - start);
        const std::string tooLong = fmt::format("the server's list of {} took over {} s; refused",
                                                ref.resource, listBudget.count() / 1000);
        if (left.count() <= 0) throw TransportError(TransportError::Kind::Timeout, tooLong);
        const bool cutByList = left < request.timeout;
        request.timeout = std::min(request.timeout, left);
        // Each page within what is left of the whole list's bound.
        request.maxBodyBytes = std::min(kMaxListBodyBytes, maxTotalBytes - totalBytes);
        HttpResponse response;
        try {
            response = execute(request, true);
        } catch (const TransportError& error) {
            // A page given only the list's last milliseconds is not "Unable to connect ... timed
            // out after 9 milliseconds": it is the whole list that took too long.
            if (error.kind() != TransportError::Kind::Timeout || !cutByList) throw;
            throw TransportError(TransportError::Kind::Timeout, tooLong);
        }
        if (response.body.empty())
            throw Error(fmt::format("the server sent an empty response to GET {}", request.url));
        totalBytes += response.body.size();
        json page = parseBody(request, response, kMaxJsonMemoryBytes - totalMemory);
        totalMemory += measureJson(response.body).memoryBytes;
        std::string next = metadataField(page, "continue");  // before onPage takes the page
        if (!onPage(page)) return;
        if (next.empty() || next == options.continueToken) return;
        options.continueToken = std::move(next);
        // A continued list must not also pin a resourceVersion; the token carries it.
        options.resourceVersion.clear();
    }
}

json Client::list(const ResourceRef& ref, const std::string& ns, const ListOptions& options) {
    json merged;
    json items = json::array();
    std::string resourceVersion;
    pagesOf(
        ref, ns, options,
        [&](json& page) {
            resourceVersion = metadataField(page, "resourceVersion");
            // Moved, not copied: a page's objects are held once.
            if (auto it = page.find("items"); it != page.end() && it->is_array()) {
                for (auto& item : *it) items.push_back(std::move(item));
                page.erase("items");
            }
            if (merged.is_null()) merged = std::move(page);
            return true;
        },
        kMaxListBodyBytes);
    if (!merged.is_object()) merged = json::object();
    merged["items"] = std::move(items);
    json& metadata = merged["metadata"];
    if (!metadata.is_object()) metadata = json::object();
    metadata.erase("continue");
    metadata.erase("remainingItemCount");
    if (!resourceVersion.empty()) metadata["resourceVersion"] = resourceVersion;
    return merged;
}

json Client::create(const ResourceRef& ref, const std::string& ns, const json& object,
                    const WriteOptions& options) {
    Query query;
    query.addWriteOptions(options);
    HttpRequest request =
        prepare("POST", collectionPath(ref, namespaceFor(ref, ns, object)) + query.text(),
                object.dump(), "application/json");
    return parseBody(request, execute(request, /*idempotent=*/false));
}

json Client::update(const ResourceRef& ref, const std::string& ns, const json& object,
                    const WriteOptions& options) {
    Query query;
    query.addWriteOptions(options);
    std::string path = objectPath(ref, namespaceFor(ref, ns, object), requireName(object, ref));
    HttpRequest request = prepare("PUT", path + query.text(), object.dump(), "application/json");
    // With metadata.resourceVersion a repeated PUT cannot overwrite anything: it gets 409.
    bool idempotent = !metadataField(object, "resourceVersion").empty();
    return parseBody(request, execute(request, idempotent));
}

json Client::updateStatus(const ResourceRef& ref, const std::string& ns, const json& object) {
    std::string path =
        objectPath(ref, namespaceFor(ref, ns, object), requireName(object, ref), "status");
    HttpRequest request = prepare("PUT", path, object.dump(), "application/json");
    return parseBody(request, execute(request, !metadataField(object, "resourceVersion").empty()));
}

json Client::patch(const ResourceRef& ref, const std::string& ns, const std::string& name,
                   PatchType type, const std::string& body, const WriteOptions& options) {
    Query query;
    query.addWriteOptions(options);
    if (type == PatchType::Apply && options.force) query.add("force", "true");
    HttpRequest request =
        prepare("PATCH", objectPath(ref, ns, name) + query.text(), body, contentTypeOf(type));
    // A JSON patch may add to a list on every attempt; merge and apply converge.
    return parseBody(request, execute(request, type != PatchType::Json));
}

json Client::apply(const ResourceRef& ref, const std::string& ns, const json& object,
                   const WriteOptions& options) {
    WriteOptions applyOptions = options;
    if (applyOptions.fieldManager.empty()) applyOptions.fieldManager = "rossoctl";
    // JSON is YAML, so the object goes as it is under the apply-patch+yaml content type.
    return patch(ref, namespaceFor(ref, ns, object), requireName(object, ref), PatchType::Apply,
                 object.dump(), applyOptions);
}

json Client::remove(const ResourceRef& ref, const std::string& ns, const std::string& name,
                    const DeleteOptions& options) {
    json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
    if (!options.propagationPolicy.empty()) body["propagationPolicy"] = options.propagationPolicy;
    if (options.gracePeriodSeconds) body["gracePeriodSeconds"] = *options.gracePeriodSeconds;
    if (options.preconditionUid) body["preconditions"]["uid"] = *options.preconditionUid;
    if (options.preconditionResourceVersion) {
        body["preconditions"]["resourceVersion"] = *options.preconditionResourceVersion;
    }
    if (options.dryRun) body["dryRun"] = json::array({"All"});
    HttpRequest request =
        prepare("DELETE", objectPath(ref, ns, name), body.dump(), "application/json");
    return parseBody(request, execute(request, /*idempotent=*/true));
}

}  // namespace rossoctl::kube
