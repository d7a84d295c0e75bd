// rossoctl agents delete N: the agent's AgentRuntime, its Service and its workload (whose pods
// go with it), whatever type it is.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct DeleteOptions {
    std::string name;
    bool wait = true;
    std::string timeout = "2m";
    std::string output;
};

bool managedAgentObject(const json& object, const std::string& name) {
    const json labels = object["metadata"].value("labels", json::object());
    return labels.value(model::kManagedByLabel, "") == model::kManagedByValue &&
           labels.value(model::kNameLabel, "") == name;
}

// What the agent consists of: its managed workload, AgentRuntime and Service, each if present.
struct Target {
    kube::ResourceRef ref;
    json object;
};

std::vector<Target> findTargets(app::Context& context, const std::string& ns,
                                const std::string& name) {
    auto& client = context.client();
    std::vector<Target> targets;
    if (context.discovery().pickVersion("agent.rossoctl.dev", {"v1alpha1"}))
        if (auto runtime = client.getIfExists(kube::resources::agentRuntimes(), ns, name))
            if (managedAgentObject(*runtime, name))
                targets.push_back({kube::resources::agentRuntimes(), *runtime});
    if (auto service = client.getIfExists(kube::resources::services(), ns, name))
        if (managedAgentObject(*service, name))
            targets.push_back({kube::resources::services(), *service});
    auto workloads = app::findWorkloads(client, context.discovery(), ns, name);
    bool foreign = false;
    for (const auto& workload : workloads) {
        if (workload.managed())
            targets.push_back({workload.kind.ref, workload.object});
        else
            foreign = true;
    }
    // Only an unmanaged workload of that name: explain rather than say "not found".
    if (targets.empty() && foreign) app::getAgent(client, context.discovery(), ns, name);
    if (targets.empty())
        throw Error(fmt::format(
            "agent \"{}\" not found in namespace \"{}\"; see the agents there with \"rossoctl "
            "agents list -n {}\"",
            name, ns, ns));
    return targets;
}

int runDelete(app::Context& context, DeleteOptions& options) {
    // validate
    options.name = objectName(options.name, agentTypes(), "agent");
    model::validateDnsSubdomain(options.name, "agent name");
    auto timeout = app::parseDuration(options.timeout, "--timeout");
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"name"});
    // complete
    const std::string ns = context.namespaceName();
    auto& client = context.client();
    // run: the AgentRuntime and Service first, so nothing points at a missing workload
    auto targets = findTargets(context, ns, options.name);
    for (const auto& target : targets) {
        kube::DeleteOptions remove;
        remove.preconditionUid = target.object["metadata"].value("uid", "");
        remove.propagationPolicy = "Foreground";  // the workload's pods go before it does
        try {
            client.remove(target.ref, ns, options.name, remove);
        } catch (const kube::ApiError& error) {
            if (!error.isNotFound()) throw;  // already gone is what we wanted
        }
        context.out() << app::typeName(target.ref) << '/' << options.name
                      << (format == ui::OutputFormat::Name ? "" : " deleted") << '\n';
    }
    if (!options.wait) return 0;
    for (const auto& target : targets) {
        if (!app::waitUntilDeleted(client, context.clock(), target.ref, ns, options.name, timeout))
            throw Error(fmt::format(
                "{}/{} is still being deleted after {}; check it with \"rossoctl agents get {} -n "
                "{}\"",
                app::typeName(target.ref), options.name, options.timeout, options.name, ns));
    }
    return 0;
}

}  // namespace

void registerAgentsDelete(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<DeleteOptions>();
    auto* command = agents.add_subcommand(
        "delete", "Delete an agent: its workload and pods, Service and AgentRuntime");
    command->add_option("name", options->name, "Agent name")->required();
    command->add_flag("--wait", options->wait,
                      "Wait until everything is gone, pods included (default true)");
    command->add_option("--timeout", options->timeout, "How long --wait waits")
        ->capture_default_str();
    command->add_option("-o,--output", options->output, "Output format: name");
    command->footer(
        "Examples:\n"
        "  rossoctl agents delete orders -n team1\n"
        "  rossoctl agents delete orders --wait=false\n"
        "\n"
        "Exit codes: 0 deleted, 1 not found, not managed by rossoctl, or still there after "
        "--timeout.");
    onRun(command, host, options, &runDelete);
}

}  // namespace rossoctl::commands
