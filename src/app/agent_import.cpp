#include "rossoctl/app/agent_import.hpp"

#include <fmt/format.h>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/sandbox.hpp"

namespace rossoctl::app {

using model::WorkloadType;
using nlohmann::json;

namespace {

// The StatefulSet controller labels pods controller-revision-hash=NAME-<10 chars>, a label
// value of at most 63 characters.
constexpr size_t kMaxStatefulSetName = 52;

bool wantsService(const ImportRequest& request) {
    return request.service || request.port.has_value();
}

}  // namespace

void checkImportRequest(const ImportRequest& request) {
    const std::string type = model::workloadTypeName(request.type);
    model::validateDnsLabel(request.name, "--name");
    if (request.type == WorkloadType::StatefulSet && request.name.size() > kMaxStatefulSetName)
        throw UsageError(fmt::format(
            "--name \"{}\" is {} characters long; a statefulset's pods need it to be at most {}",
            request.name, request.name.size(), kMaxStatefulSetName));
    // Service names are DNS-1035 labels: they must start with a letter.
    if (wantsService(request) && !(request.name[0] >= 'a' && request.name[0] <= 'z'))
        throw UsageError(fmt::format(
            "--name \"{}\" must start with a letter when the agent gets a Service (--port or "
            "--service)",
            request.name));
    if (!request.storage.empty() && request.type != WorkloadType::Sandbox &&
        request.type != WorkloadType::StatefulSet)
        throw UsageError(
            fmt::format("--storage needs --deployment-type sandbox or statefulset, not {}", type));
    if (request.lifetime.count() > 0 && request.type != WorkloadType::Sandbox &&
        request.type != WorkloadType::Job)
        throw UsageError(fmt::format(
            "--lifetime needs --deployment-type sandbox or job: a {}'s pods cannot have a "
            "deadline",
            type));
}

std::vector<PlannedObject> planImport(const ImportRequest& request,
                                      std::chrono::system_clock::time_point now) {
    model::HardenedPodOptions pod;
    pod.image = request.image;
    pod.env = request.env;
    pod.command = request.command;
    pod.args = request.args;
    pod.port = request.port;
    pod.cpu = request.cpu;
    pod.memory = request.memory;
    pod.runtimeClass = request.runtimeClass;
    pod.imagePullSecret = request.imagePullSecret;

    std::vector<PlannedObject> planned;
    const auto workloadRef = workloadResource(request.type, request.sandboxVersion);
    if (request.type == WorkloadType::Sandbox) {
        model::SandboxOptions options;
        options.name = request.name;
        options.namespaceName = request.namespaceName;
        options.version = request.sandboxVersion;
        options.pod = pod;
        // Same number of seconds as the shutdown time, from the same instant.
        options.pod.activeDeadlineSeconds = request.lifetime.count();
        options.storage = request.storage;
        options.gateImage = request.gateImage;
        options.service = wantsService(request);  // the Sandbox controller creates it
        options.shutdownTime = now + request.lifetime;
        planned.push_back({workloadRef, model::buildSandbox(options, now)});
    } else {
        model::WorkloadOptions options;
        options.name = request.name;
        options.namespaceName = request.namespaceName;
        options.pod = pod;
        options.storage = request.storage;
        if (request.lifetime.count() > 0) options.activeDeadlineSeconds = request.lifetime.count();
        json workload = request.type == WorkloadType::Deployment ? model::buildDeployment(options)
                        : request.type == WorkloadType::StatefulSet
                            ? model::buildStatefulSet(options)
                            : model::buildJob(options);
        planned.push_back({workloadRef, std::move(workload)});
        // A StatefulSet's governing Service is headless.
        if (wantsService(request))
            planned.push_back(
                {kube::resources::services(),
                 model::buildService(request.name, request.namespaceName, request.port,
                                     request.type == WorkloadType::StatefulSet)});
    }
    if (request.agentRuntime) {
        const json& workload = planned.front().object;
        model::TargetRef target{workload["apiVersion"].get<std::string>(),
                                workload["kind"].get<std::string>(), request.name};
        planned.push_back({kube::resources::agentRuntimes(),
                           model::buildAgentRuntime(request.name, request.namespaceName, target)});
    }
    return planned;
}

}  // namespace rossoctl::app
