// rossoctl project describe: quota use, container limits, egress policies in words, and the
// sandboxes of a project.
#include <fmt/format.h>

#include <map>

#include "conventions.hpp"
#include "project_common.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;
namespace resources = kube::resources;

struct ProjectDescribeOptions {
    std::string name;
    std::string output;
};

std::string ageOf(app::Context& context, const json& object) {
    auto created = kube::parseTimestamp(
        object.value("metadata", json::object()).value("creationTimestamp", ""));
    if (!created) return "<unknown>";
    return ui::formatAge(
        std::chrono::duration_cast<std::chrono::seconds>(context.clock().now() - *created));
}

// The server's text as describe prints it: control characters escaped, as in its tables.
std::string shown(const std::string& text) {
    return ui::escapeForTerminal(text);
}

json itemsOrEmpty(app::Context& context, const kube::ResourceRef& ref, const std::string& ns) {
    return context.client().list(ref, ns).value("items", json::array());
}

// Everything describe shows, as one object (also what -o json/yaml prints).
json gather(app::Context& context, const std::string& name) {
    auto& discovery = context.discovery();
    json result = {{"namespace", getProjectNamespace(context, name)}};
    result["resourceQuotas"] = itemsOrEmpty(context, resources::resourceQuotas(), name);
    result["limitRanges"] = itemsOrEmpty(context, resources::limitRanges(), name);
    json policies = itemsOrEmpty(context, resources::networkPolicies(), name);
    if (discovery.isServed("k8s.ovn.org"))
        for (auto& item : itemsOrEmpty(context, resources::egressFirewalls(), name))
            policies.push_back(item);
    if (discovery.isServed("cilium.io"))
        for (auto& item : itemsOrEmpty(context, resources::ciliumNetworkPolicies(), name))
            policies.push_back(item);
    for (auto& policy : policies) {
        if (!policy.contains("kind")) policy["kind"] = "NetworkPolicy";  // list items omit it
        policy["rossoctl.dev/allows"] = model::describePolicy(policy);
    }
    result["policies"] = policies;
    json sandboxes = json::array();
    try {
        sandboxes = itemsOrEmpty(context, discovery.sandboxes(), name);
    } catch (const kube::ApiError&) {
        throw;
    } catch (const Error&) {
        // the Sandbox API is not installed
    }
    // Each sandbox's pod as sandbox list finds it: the pod its Sandbox controls, null when there
    // is none (a pod the quota refused is named in the Sandbox's status all the same).
    result["sandboxPods"] = json::object();
    if (!sandboxes.empty()) {
        std::map<std::string, std::string> pods;  // owner UID -> pod name, the newest first
        for (auto& [uid, pod] :
             app::podsByOwner(context.client(), name, "agents.x-k8s.io/sandbox-name-hash"))
            pods.emplace(uid, pod.name);
        for (const auto& sandbox : sandboxes) {
            const json metadata = sandbox.value("metadata", json::object());
            const auto pod = pods.find(metadata.value("uid", ""));
            result["sandboxPods"][metadata.value("name", "")] =
                pod == pods.end() || pod->second.empty() ? json(nullptr) : json(pod->second);
        }
    }
    // A warm pool's spares apart from the project's own sandboxes.
    result["sandboxes"] = json::array();
    result["warmPoolSandboxes"] = json::array();
    for (auto& sandbox : sandboxes)
        result[app::isWarmPoolSpare(sandbox) ? "warmPoolSandboxes" : "sandboxes"].push_back(
            std::move(sandbox));
    // managedFields hidden, as every other -o json/yaml hides them.
    result["namespace"] = ui::withoutManagedFields(std::move(result["namespace"]));
    for (const char* list :
         {"resourceQuotas", "limitRanges", "policies", "sandboxes", "warmPoolSandboxes"})
        for (auto& item : result[list]) item = ui::withoutManagedFields(std::move(item));
    return result;
}

void printQuota(std::ostream& out, const json& quota) {
    out << fmt::format("\nQuota {}:\n",
                       shown(quota.value("metadata", json::object()).value("name", "")));
    ui::Table table{{"  RESOURCE", "USED", "HARD"}, {}, {}};
    const json used = quota.value("status", json::object()).value("used", json::object());
    const json hardLimits = quota.value("spec", json::object()).value("hard", json::object());
    for (const auto& [resource, hard] : hardLimits.items()) {
        std::string usedText = used.value(resource, "-");
        table.rows.push_back({"  " + resource, usedText, hard.get<std::string>()});
    }
    ui::printTable(out, table, false, false);
}

void printLimits(std::ostream& out, const json& limitRange) {
    for (const auto& limit :
         limitRange.value("spec", json::object()).value("limits", json::array())) {
        out << fmt::format("\nLimits {} (per {}):\n",
                           shown(limitRange.value("metadata", json::object()).value("name", "")),
                           shown(limit.value("type", "Container")));
        ui::Table table{{"  RESOURCE", "DEFAULT LIMIT", "DEFAULT REQUEST", "MAX"}, {}, {}};
        for (const char* resource : {"cpu", "memory"}) {
            auto value = [&](const char* field) {
                return limit.value(field, json::object()).value(resource, "-");
            };
            table.rows.push_back({std::string("  ") + resource, value("default"),
                                  value("defaultRequest"), value("max")});
        }
        ui::printTable(out, table, false, false);
    }
}

// One line per SandboxWarmPool: how many spares it keeps and how many are ready.
void printWarmPools(std::ostream& out, const json& spares, const std::string& ns) {
    if (spares.empty()) return;
    std::map<std::string, std::pair<int, int>> pools;  // owner -> spares, ready
    for (const auto& sandbox : spares) {
        auto& [count, ready] = pools[app::sandboxOwner(sandbox)];
        ++count;
        if (model::sandboxReady(sandbox)) ++ready;
    }
    out << "\nWarm pools (spares for sandbox run --pool, not the project's own sandboxes):\n";
    for (const auto& [owner, counts] : pools)
        out << fmt::format("  {}: {} spare sandbox{}, {} ready\n", shown(owner), counts.first,
                           counts.first == 1 ? "" : "es", counts.second);
    out << fmt::format("  list them with: rossoctl sandbox list -n {} --include-pool\n", shown(ns));
}

void printHuman(app::Context& context, const json& info) {
    auto& out = context.out();
    const auto& ns = info["namespace"];
    const auto& metadata = ns["metadata"];
    auto labels = metadata.value("labels", json::object());
    auto annotations = metadata.value("annotations", json::object());
    out << fmt::format("Name:              {}\n", shown(metadata.value("name", "")));
    out << fmt::format("Status:            {}\n",
                       shown(ns.value("status", json::object()).value("phase", "")));
    out << fmt::format("Created:           {} ago\n", ageOf(context, ns));
    out << fmt::format("Pod security:      enforce={} warn={} audit={}\n",
                       shown(labels.value("pod-security.kubernetes.io/enforce", "-")),
                       shown(labels.value("pod-security.kubernetes.io/warn", "-")),
                       shown(labels.value("pod-security.kubernetes.io/audit", "-")));
    out << fmt::format(
        "Default lifetime:  {}\n",
        shown(annotations.value(model::kDefaultLifetimeAnnotation, "24h (not set)")));
    out << fmt::format("Managed by:        {}\n",
                       shown(labels.value(model::kManagedByLabel, "<not rossoctl>")));
    if (info["resourceQuotas"].empty()) out << "\nQuota: none (pods are not limited in number)\n";
    for (const auto& quota : info["resourceQuotas"]) printQuota(out, quota);
    if (info["limitRanges"].empty()) out << "\nLimits: none\n";
    for (const auto& limitRange : info["limitRanges"]) printLimits(out, limitRange);
    out << "\nPolicies:\n";
    if (info["policies"].empty()) out << "  none: every connection in and out is allowed\n";
    for (const auto& policy : info["policies"]) {
        std::string kind = policy.value("kind", "NetworkPolicy");
        std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
        out << fmt::format("  {}/{}\n", shown(kind),
                           shown(policy.value("metadata", json::object()).value("name", "")));
        for (const auto& line : policy["rossoctl.dev/allows"])
            out << "      " << shown(line.get<std::string>()) << '\n';
    }
    out << "\nSandboxes:\n";
    if (info["sandboxes"].empty()) {
        out << fmt::format(
            "  none; create one with: rossoctl agents import --deployment-type sandbox from-image "
            "--name my-agent --containerImage IMG -n {}\n",
            shown(metadata.value("name", "")));
    } else {
        ui::Table table{{"  NAME", "READY", "REASON", "POD", "AGE"}, {}, {}};
        for (const auto& sandbox : info["sandboxes"]) {
            std::string reason;
            bool ready = model::sandboxReady(sandbox, &reason);
            const std::string name = sandbox.value("metadata", json::object()).value("name", "");
            const json pod = info["sandboxPods"].value(name, json(nullptr));
            table.rows.push_back(
                {"  " + name, ready ? "True" : "False", reason.empty() ? "-" : reason,
                 pod.is_string() ? pod.get<std::string>() : "<none>", ageOf(context, sandbox)});
        }
        ui::printTable(out, table, false, false);
    }
    printWarmPools(out, info["warmPoolSandboxes"], metadata.value("name", ""));
}

int runProjectDescribe(app::Context& context, ProjectDescribeOptions& options) {
    options.name = objectName(options.name, {namespaceType()}, "project");
    model::validateDnsLabel(options.name, "project name");
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"json", "yaml"});
    auto info = gather(context, options.name);
    if (format == ui::OutputFormat::Json)
        ui::printJson(context.out(), info);
    else if (format == ui::OutputFormat::Yaml)
        ui::printYaml(context.out(), info);
    else
        printHuman(context, info);
    return 0;
}

}  // namespace

void registerProjectDescribe(CLI::App& project, CommandHost& host) {
    auto options = std::make_shared<ProjectDescribeOptions>();
    auto* command = project.add_subcommand(
        "describe", "Show a project's quota use, limits, egress policies and sandboxes");
    command->add_option("name", options->name, "Project (namespace) name")->required();
    command->add_option("-o,--output", options->output, "Output format: json|yaml");
    command->footer(
        "Examples:\n"
        "  rossoctl project describe team1\n"
        "  rossoctl project describe team1 -o json\n");
    onRun(command, host, options, &runProjectDescribe);
}

}  // namespace rossoctl::commands
