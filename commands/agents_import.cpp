// rossoctl agents import [--deployment-type T] from-image: a hardened workload, its Service and
// the AgentRuntime pointing at it, created (never overwritten) in one namespace.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agent_import.hpp"
#include "rossoctl/app/agent_import_write.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/env_file.hpp"
#include "rossoctl/app/project_gate.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct ImportOptions {
    std::string deploymentType = "deployment";
    std::string name;
    std::string image;
    std::string imagePullSecret;
    std::vector<std::string> envVars;
    std::string envVarsFile;
    std::vector<std::string> command;
    std::vector<std::string> args;
    std::string port;
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string runtimeClass;
    std::string storage;
    bool service = false;
    std::string lifetime;
    std::string dryRun;  // "", none, client, server
    std::string output;
    bool showManagedFields = false;
};

// Every flag checked; nothing here sends a request.
app::ImportRequest validate(const ImportOptions& options) {
    app::ImportRequest request;
    auto type = model::parseWorkloadType(options.deploymentType);
    if (!type)
        throw UsageError(fmt::format(
            "invalid --deployment-type \"{}\": use deployment, statefulset, job or sandbox",
            options.deploymentType));
    request.type = *type;
    if (options.name.empty()) throw UsageError("--name is required");
    request.name = options.name;
    if (options.image.empty()) throw UsageError("--containerImage is required");
    model::validateImageReference(options.image, "--containerImage");
    request.image = options.image;
    if (!options.imagePullSecret.empty())
        model::validateDnsSubdomain(options.imagePullSecret, "--imagePullSecret");
    request.imagePullSecret = options.imagePullSecret;
    std::vector<model::EnvVar> fromFile, fromFlags;
    if (!options.envVarsFile.empty())
        fromFile = app::readEnvFile(options.envVarsFile, "--envVarsFile");
    for (const auto& assignment : options.envVars) {
        auto var = model::parseEnvAssignment(assignment, "--envVar");
        for (const auto& earlier : fromFlags)
            if (earlier.name == var.name)
                throw UsageError(
                    fmt::format("--envVar {} is given twice; give each variable once", var.name));
        fromFlags.push_back(std::move(var));
    }
    request.env = model::mergeEnv(fromFile, fromFlags);  // --envVar wins over the file
    for (const auto& [words, flag] :
         {std::pair{&options.command, "--command"}, {&options.args, "--args"}})
        for (const auto& word : *words)
            if (word.empty() || word.find('\0') != std::string::npos)
                throw UsageError(fmt::format("{} takes a non-empty word per use", flag));
    request.command = options.command;
    request.args = options.args;
    if (!options.port.empty()) request.port = model::parsePort(options.port, "--port");
    for (const auto& [value, flag] :
         {std::pair{options.cpu, "--cpu"}, {options.memory, "--memory"}})
        if (model::parseQuantity(value, flag) <= 0)
            throw UsageError(fmt::format("{} must be greater than zero", flag));
    request.cpu = options.cpu;
    request.memory = options.memory;
    if (!options.storage.empty() && model::parseQuantity(options.storage, "--storage") <= 0)
        throw UsageError("--storage must be greater than zero");
    request.storage = options.storage;
    if (!options.runtimeClass.empty())
        model::validateDnsSubdomain(options.runtimeClass, "--runtime-class");
    request.runtimeClass = options.runtimeClass;
    request.service = options.service;
    if (!options.lifetime.empty())
        request.lifetime = model::parseLifetime(options.lifetime, "--lifetime");
    app::checkImportRequest(request);
    return request;
}

int runImport(app::Context& context, ImportOptions& options) {
    // validate: every flag, before any request
    const DryRun dryRun = parseDryRun(options.dryRun, context.err());
    app::ImportRequest request = validate(options);
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty())
        format = ui::parseOutputFormat(options.output, {"json", "yaml", "name"});
    // complete: namespace, served versions, default lifetime
    request.namespaceName = context.namespaceName();
    model::validateDnsLabel(request.namespaceName, "namespace");
    auto& discovery = context.discovery();
    if (request.type == model::WorkloadType::Sandbox)
        request.sandboxVersion = discovery.sandboxes().version;
    request.agentRuntime = discovery.pickVersion("agent.rossoctl.dev", {"v1alpha1"}).has_value();
    const bool clientDryRun = dryRun == DryRun::Client;
    bool needsLifetime =
        request.type == model::WorkloadType::Sandbox || request.type == model::WorkloadType::Job;
    if (needsLifetime && request.lifetime.count() == 0)
        request.lifetime = app::defaultLifetime(context, request.namespaceName, clientDryRun);
    if (request.type == model::WorkloadType::Sandbox) {
        const auto gate = app::projectGate(context.client(), request.namespaceName);
        request.gateImage = gate.image;
        // Verify would find its egress unproven for want of the gate (walk 7 W6).
        if (!gate.whyNone.empty())
            context.err() << "Warning: the sandbox gets no egress gate, so \"rossoctl sandbox "
                             "verify\" will leave its egress unproven: "
                          << gate.whyNone << "\n";
    }
    if (!request.agentRuntime)
        context.err() << "Warning: the AgentRuntime API (agent.rossoctl.dev) is not served by this "
                         "cluster; creating the workload alone\n";
    const bool serverDryRun = dryRun == DryRun::Server;
    auto planned = app::planImport(request, context.clock().now());
    // run: the refusals and creates are app::importAgent's
    std::vector<json> results;
    if (clientDryRun) {
        for (const auto& object : planned) results.push_back(object.object);
    } else {
        results = app::importAgent(context, request, planned, serverDryRun);
    }
    if (ui::printJsonOrYaml(context.out(), format, ui::asList(json(results)),
                            options.showManagedFields))
        return 0;
    const char* suffix = clientDryRun ? " (dry run)" : serverDryRun ? " (server dry run)" : "";
    for (size_t i = 0; i < planned.size(); ++i) {
        context.out() << app::typeName(planned[i].ref) << '/' << request.name;
        if (format != ui::OutputFormat::Name) context.out() << " created" << suffix;
        context.out() << '\n';
    }
    if (!clientDryRun && !serverDryRun && format == ui::OutputFormat::Table)
        context.err() << fmt::format("Next: wait for it with \"rossoctl agents wait {} -n {}\"\n",
                                     request.name, request.namespaceName);
    return 0;
}

}  // namespace

void registerAgentsImport(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<ImportOptions>();
    auto* import = agents.add_subcommand("import", "Deploy an agent as a hardened workload");
    import->require_subcommand(1);
    const char* typeHelp = "Workload: deployment|statefulset|job|sandbox (default deployment)";
    import->add_option("--deployment-type,--deploymentType", options->deploymentType, typeHelp);

    auto* command = import->add_subcommand(
        "from-image",
        "Deploy an agent from a container image, with an AgentRuntime pointing at it");
    command->add_option("--deployment-type,--deploymentType", options->deploymentType, typeHelp);
    command->add_option("--name", options->name, "Agent name (a DNS-1123 label)")->required();
    command->add_option("--containerImage,--container-image", options->image, "Container image")
        ->required();
    command->add_option("--imagePullSecret,--image-pull-secret", options->imagePullSecret,
                        "Secret for pulling the image");
    command->add_option("--envVar,--env-var,--env", options->envVars,
                        "Environment variable K=V (repeatable; wins over --envVarsFile)");
    command->add_option("--envVarsFile,--env-vars-file", options->envVarsFile,
                        "File of K=V lines ('#' comments allowed)");
    command->add_option("--command", options->command,
                        "The container's command instead of the image's entrypoint, one word per "
                        "use (repeatable)");
    command->add_option("--args", options->args,
                        "The container's arguments instead of the image's, one word per use "
                        "(repeatable; a word starting with '-' as --args=-c)");
    command->add_option("--port", options->port, "Container port; also creates a Service");
    command->add_option("--cpu", options->cpu, "CPU request and limit")->capture_default_str();
    command->add_option("--memory", options->memory, "Memory request and limit")
        ->capture_default_str();
    command->add_option("--runtime-class,--runtimeClass", options->runtimeClass,
                        "RuntimeClass for the pod (e.g. gvisor)");
    command->add_option("--storage", options->storage,
                        "Persistent work volume of this size (sandbox, statefulset)");
    command->add_flag("--service", options->service, "Create a Service even without --port");
    command->add_option("--lifetime", options->lifetime,
                        "How long it may run (sandbox, job); default: the namespace's "
                        "rossoctl.dev/default-lifetime, else 24h");
    addDryRunFlag(command, options->dryRun,
                  "client: print the objects, send nothing; server: the server checks them, "
                  "stores nothing");
    command->add_option("-o,--output", options->output, "Output format: yaml|json|name");
    addShowManagedFieldsFlag(command, options->showManagedFields);
    command->footer(
        "Examples:\n"
        "  rossoctl agents import --deployment-type sandbox from-image --name orders \\\n"
        "      --containerImage ghcr.io/acme/orders:1.4 --envVar MCP_URL=http://mcp:8080 -n team1\n"
        "  rossoctl agents import from-image --name web --container-image nginx:1.27 --port 8080\n"
        "  rossoctl agents import --deployment-type job from-image --name batch \\\n"
        "      --containerImage python:3.12 --dry-run=client -o yaml\n"
        "  rossoctl agents import --deployment-type sandbox from-image --name once \\\n"
        "      --containerImage busybox:1.36 --command sh --args=-c --args 'sleep 3600'\n"
        "\n"
        "Exit codes: 0 created, 1 API error or the agent already exists, 2 invalid flags "
        "(nothing sent).");
    onRun(command, host, options, &runImport);
}

}  // namespace rossoctl::commands
