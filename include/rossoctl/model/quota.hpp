#pragma once
// Whether a namespace's ResourceQuotas leave room for one more pod: what the apiserver's quota
// admission decides, read from the quotas themselves, so a wait can name the quota that refuses
// a pod whichever controller (if any) tries to create it and whatever that controller reports.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rossoctl::model {

// The first quota of `quotas` (a ResourceQuotaList) that refuses a pod of `podSpec`, in the
// apiserver's words: "exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0".
// Only a refusal that lasts until someone changes the quota or the pods: both the use the quota
// counted (status.used) and the use of the pods in `pods` (the namespace's PodList; pods being
// deleted or finished left out) leave no room. Scoped quotas and resources other than pods,
// cpu, memory and ephemeral-storage are not weighed; nullopt when nothing is sure to refuse.
std::optional<std::string> quotaRefusal(const nlohmann::json& podSpec, const nlohmann::json& quotas,
                                        const nlohmann::json& pods);

// The ResourceQuota an apiserver refusal names ("... exceeded quota: NAME, requested: ..."); ""
// when the message names none.
std::string refusingQuotaName(const std::string& message);

// What such a refusal says is left of each resource it names, in its own numbers:
// "limits.cpu 1 asked, 500m of 4 left" (entries joined by "; "); "" when it cannot be read so.
std::string quotaRoomLeft(const std::string& message);

// Whether such a refusal, written earlier in a status or an event, still holds against `quota`
// (that ResourceQuota as it is now) and the namespace's `pods`: what it requested on top of the
// use counted now (the lesser of the quota's status and the live pods', as quotaRefusal weighs
// it) passes a limit. Admission counts a deleted pod until the quota controller catches up, so
// a restart at a quota that fits exactly is refused once, then not. True whenever the message
// or the quota cannot be read that way (scoped, or a resource not weighed here).
bool quotaRefusalHolds(const std::string& message, const nlohmann::json& quota,
                       const nlohmann::json& pods);

}  // namespace rossoctl::model
