// rossoctl sandbox set-env: edit a Sandbox's pod template env without losing a concurrent change.
#include <fmt/format.h>

#include "command.hpp"
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/env_file.hpp"
#include "rossoctl/app/sandbox_env.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/model/env_edit.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct SetEnvOptions {
    std::vector<std::string> arguments;  // SANDBOX then NAME=VALUE / NAME-
    std::string container;
    std::string envFile;
    bool list = false;
    bool restart = false;
    std::string dryRun;  // none, client, server (bare --dry-run: client)
    std::string output;
    bool showManagedFields = false;
    std::string timeout = "2m";
};

int listEnv(app::Context& context, const kube::ResourceRef& ref, const std::string& ns,
            const std::string& name, const SetEnvOptions& options,
            std::optional<ui::OutputFormat> format) {
    json sandbox = app::getSandboxOrHint(context.client(), ref, ns, name);
    json& container = model::selectContainer(app::sandboxPodSpec(sandbox, name), options.container,
                                             "sandbox/" + name);
    if (format) {
        json env = container.value("env", json::array());
        if (*format == ui::OutputFormat::Json)
            ui::printJson(context.out(), env);
        else
            ui::printYaml(context.out(), env);
        return kExitOk;
    }
    // The pod spec's names and values are the server's: one line each, escaped (\n included).
    context.out() << "# sandbox/" << name << ", container "
                  << ui::escapeForTerminal(container.value("name", "")) << '\n';
    for (const auto& line : model::describeEnv(container))
        context.out() << ui::escapeForTerminal(line) << '\n';
    return kExitOk;
}

int restartPod(app::Context& context, const kube::ResourceRef& ref, const std::string& ns,
               const std::string& name, std::chrono::milliseconds timeout, const json& sandbox) {
    app::RestartOptions restart;
    restart.timeout = timeout;
    restart.cancel = context.cancelFlag();
    restart.onSlowStop = [&context](const std::string& line) {
        context.err() << ui::escapeErrorLine(line, context.utf8Terminal()) << '\n' << std::flush;
    };
    auto result =
        app::restartSandbox(context.client(), context.clock(), ref, ns, name, restart, sandbox);
    for (const auto& note : result.notes)
        context.err() << "note: " << ui::escapeErrorLine(note) << '\n';
    context.out() << ui::escapeForTerminal(app::describeRestart(name, result)) << '\n';
    return kExitOk;
}

int runSetEnv(app::Context& context, SetEnvOptions& options) {
    // validate: every argument, before any request
    if (options.arguments.empty())
        throw UsageError(
            "SANDBOX is required: rossoctl sandbox set-env SANDBOX NAME=VALUE... (or NAME-)");
    const std::string name = objectName(options.arguments.front(), {sandboxType()}, "sandbox");
    model::validateDnsSubdomain(name, "sandbox name");
    const DryRun dryRun = parseDryRun(options.dryRun, context.err());
    const std::vector<std::string> edits(options.arguments.begin() + 1, options.arguments.end());
    std::optional<ui::OutputFormat> format;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"json", "yaml"});
    if (!options.container.empty()) model::validateDnsLabel(options.container, "-c/--container");
    if (options.list && (!edits.empty() || !options.envFile.empty() || options.restart))
        throw UsageError("--list shows the variables; it takes no changes and no --restart");
    if (dryRun != DryRun::None && options.restart)
        throw UsageError("--dry-run writes nothing, so there is nothing to --restart");
    const auto timeout = app::parseDuration(options.timeout, "--timeout");
    std::vector<model::EnvVar> fromFile;
    if (!options.envFile.empty()) fromFile = app::readEnvFile(options.envFile, "--from-env-file");
    const model::EnvChange change = model::parseEnvChange(edits, fromFile);
    if (!options.list && change.set.empty() && change.remove.empty())
        throw UsageError(
            "nothing to change: give NAME=VALUE or NAME- arguments or --from-env-file, or --list");

    // complete
    const std::string ns = context.namespaceName();
    const kube::ResourceRef ref = context.discovery().sandboxes();
    if (options.list) return listEnv(context, ref, ns, name, options, format);

    // run: GET, change, PUT with resourceVersion; on 409 read again and redo the same change
    const auto mode = dryRun == DryRun::Server   ? app::EnvWrite::ServerDryRun
                      : dryRun == DryRun::Client ? app::EnvWrite::ClientDryRun
                                                 : app::EnvWrite::Send;
    const auto result = app::editSandboxEnv(context.client(), context.clock(), context.random(),
                                            ref, ns, name, options.container, change, mode);
    const json& written = result.sandbox;
    if (!result.edit.changed()) {
        // An earlier run may have written the template and failed before its restart.
        if (options.restart && dryRun == DryRun::None &&
            app::podEnvDiffers(context.client(), written, result.container)) {
            context.out() << fmt::format(
                "sandbox/{}: template already up to date; its running pod is not\n", name);
            return restartPod(context, ref, ns, name, timeout, written);
        }
        context.out() << "sandbox/" << name << ": environment unchanged\n";
        return kExitOk;
    }
    const std::string dry = dryRun == DryRun::Server   ? " (server dry run)"
                            : dryRun == DryRun::Client ? " (dry run)"
                                                       : "";
    if (!format || !ui::printJsonOrYaml(context.out(), *format, written, options.showManagedFields))
        context.out() << fmt::format("sandbox/{} env updated{}: {}\n", name, dry,
                                     model::summarizeEnvEdit(result.edit));
    if (dryRun != DryRun::None) return kExitOk;
    if (!options.restart) {
        context.err() << fmt::format(
            "note: the running pod still has the old environment (the controller does not "
            "apply template changes); run \"rossoctl sandbox restart {} -n {}\" to restart "
            "it\n",
            name, ns);
        return kExitOk;
    }
    // Suspended, it has no pod with the old environment: the change is all there is to do.
    if (app::suspendedInSpec(written)) {
        context.err() << fmt::format(
            "note: sandbox/{} is suspended, so there is no pod to restart; its pod gets the new "
            "environment when you resume it (\"rossoctl sandbox resume {} -n {}\")\n",
            name, name, ns);
        return kExitOk;
    }
    return restartPod(context, ref, ns, name, timeout, written);
}

}  // namespace

void registerSandboxSetEnv(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<SetEnvOptions>();
    auto* command = sandbox.add_subcommand(
        "set-env", "Set, add or remove environment variables in a sandbox's pod template");
    // Not required here: the command says what is missing in the words --help uses.
    command->add_option("SANDBOX", options->arguments,
                        "SANDBOX (or sandbox/NAME), then NAME=VALUE to set (or add) and NAME- to "
                        "remove");
    command->add_option("-c,--container", options->container,
                        "Container to edit (default: \"agent\", else the only container)");
    command->add_option("--from-env-file", options->envFile,
                        "Read NAME=VALUE lines from a file (arguments win)");
    command->add_flag("--list", options->list,
                      "Print the current variables (references shown, never resolved)");
    command->add_flag("--restart", options->restart,
                      "Restart the sandbox's pod afterwards so the change takes effect (files "
                      "in /workspace are lost unless imported with --storage)");
    command
        ->add_option("--timeout", options->timeout,
                     "With --restart: how long to wait for the new pod")
        ->capture_default_str();
    addDryRunFlag(command, options->dryRun,
                  "client: say what would change (with -o yaml|json: print the changed "
                  "Sandbox), send nothing; server: the apiserver checks the change, stores "
                  "nothing");
    command->add_option("-o,--output", options->output,
                        "Print the written Sandbox (or with --list the env) as json|yaml");
    addShowManagedFieldsFlag(command, options->showManagedFields);
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox set-env orders MCP_URL=http://new-address:8080/mcp -n team1\n"
        "  rossoctl sandbox set-env orders DEBUG- LOG_LEVEL=info --restart\n"
        "  rossoctl sandbox set-env orders --list\n\n"
        "A concurrent change is never lost: the write carries the resourceVersion it read and\n"
        "is redone on a conflict. The running pod keeps its environment until it restarts.\n"
        "Exit codes: 0 changed or unchanged, 1 API error, 2 invalid arguments (nothing sent).");
    onRun(command, host, options, &runSetEnv);
}

}  // namespace rossoctl::commands
