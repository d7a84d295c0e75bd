// The warm pool of `sandbox run` pods: reconcile to a size, claim one atomically.
#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/app/listed_object.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

std::string poolSelector() {
    return fmt::format("{}={},{}={}", model::kManagedByLabel, model::kManagedByValue, kPoolLabel,
                       kPoolWarm);
}

bool sameShape(const json& pod, const RunPodShape& shape) {
    const json annotations = pod["metadata"].value("annotations", json::object());
    return annotations.value(kPoolShapeAnnotation, "") == shapeKey(shape);
}

bool terminatingPod(const json& pod) {
    return pod["metadata"].contains("deletionTimestamp");
}

bool runningPod(const json& pod) {
    return pod.contains("status") && pod["status"].value("phase", "") == "Running";
}

bool finishedPod(const json& pod) {
    const std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
    return phase == "Succeeded" || phase == "Failed";
}

std::string creationOf(const json& pod) {
    return pod["metadata"].value("creationTimestamp", "");
}

}  // namespace

PoolStatus reconcilePool(kube::Client& client, const std::string& ns, const RunPodShape& shape,
                         int size, long lifetimeSeconds) {
    PoolStatus status;
    kube::ListOptions options;
    options.labelSelector = poolSelector();
    const json list = client.list(kube::resources::pods(), ns, options);
    std::vector<json> live;
    for (const auto& pod : list.value("items", json::array())) {
        if (terminatingPod(pod) || !sameShape(pod, shape)) continue;
        // A nameless pod made DELETE .../pods (every pod of ns): neither deleted nor counted.
        if (!unusableListedObject(pod, ns).empty()) {
            ++status.skipped;
            continue;
        }
        if (finishedPod(pod)) {  // expired at its deadline: replace it
            kube::DeleteOptions gone;
            gone.preconditionUid = pod["metadata"].value("uid", "");
            try {
                client.remove(kube::resources::pods(), ns, listedName(pod), gone);
            } catch (const kube::ApiError& error) {
                if (!error.isNotFound() && error.code() != 409) throw;
            }
            continue;
        }
        live.push_back(pod);
    }
    std::sort(live.begin(), live.end(),
              [](const json& a, const json& b) { return creationOf(a) < creationOf(b); });
    while (static_cast<int>(live.size()) > size) {
        const json& pod = live.back();
        kube::DeleteOptions gone;
        gone.preconditionUid = pod["metadata"].value("uid", "");
        gone.gracePeriodSeconds = 0;
        try {
            client.remove(kube::resources::pods(), ns, listedName(pod), gone);
            ++status.deleted;
        } catch (const kube::ApiError& error) {
            if (!error.isNotFound() && error.code() != 409) throw;
        }
        live.pop_back();
    }
    for (const auto& pod : live) (runningPod(pod) ? status.warm : status.starting)++;
    for (int i = static_cast<int>(live.size()); i < size; ++i) {
        client.create(kube::resources::pods(), ns, warmPodManifest(shape, lifetimeSeconds));
        ++status.created;
    }
    return status;
}

std::optional<ClaimedPod> claimWarmPod(kube::Client& client, const Clock& clock,
                                       const std::string& ns, const RunPodShape& shape,
                                       long timeoutSeconds, const std::string& claimer, bool kept) {
    kube::ListOptions options;
    options.labelSelector = poolSelector();
    const json list = client.list(kube::resources::pods(), ns, options);
    std::vector<json> candidates;
    for (const auto& pod : list.value("items", json::array()))
        if (runningPod(pod) && !terminatingPod(pod) && sameShape(pod, shape) &&
            unusableListedObject(pod, ns).empty())
            candidates.push_back(pod);
    // Newest first: the most deadline left, and older pods age out of the pool on their own.
    std::sort(candidates.begin(), candidates.end(),
              [](const json& a, const json& b) { return creationOf(a) > creationOf(b); });
    const long needed = timeoutSeconds + kDeadlineMarginSeconds;
    for (const auto& pod : candidates) {
        const auto started = kube::parseTimestamp(pod["status"].value("startTime", ""));
        const long deadline = pod["spec"].value("activeDeadlineSeconds", 0L);
        if (!started || deadline <= 0) continue;
        const long age = static_cast<long>(
            std::chrono::duration_cast<std::chrono::seconds>(clock.now() - *started).count());
        if (age + needed > deadline) continue;  // would die mid-run
        std::optional<long> shorter = age + needed + 5;
        if (*shorter >= deadline) shorter.reset();
        try {
            const std::string name = listedName(pod);
            json claimed = client.patch(kube::resources::pods(), ns, name, kube::PatchType::Json,
                                        claimPatch(claimer, shorter, kept));
            return ClaimedPod{name, std::move(claimed), deadline};
        } catch (const kube::ApiError& error) {
            // 422: the test op failed, someone else claimed it; 404/409: gone or changed.
            if (error.code() != 422 && error.code() != 409 && !error.isNotFound()) throw;
        }
    }
    return std::nullopt;
}

}  // namespace rossoctl::app::run
