// rossoctl sandbox get S: one Sandbox with whether it is Ready, why not, and its pod.
#include <fmt/format.h>

#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/model/sandbox.hpp"

namespace rossoctl::commands {
namespace {

struct GetOptions {
    std::string name;
    OutputFlags output;
};

int runGet(app::Context& context, GetOptions& options) {
    // validate
    model::validateDnsSubdomain(options.name, "sandbox name");
    auto format = ui::parseOutputFormat(options.output.output);
    // complete
    const std::string ns = context.namespaceName();
    auto ref = context.discovery().sandboxes();
    // run
    auto& client = context.client();
    auto sandbox = client.getIfExists(ref, ns, options.name);
    if (!sandbox)
        throw Error(fmt::format(
            "sandbox \"{}\" not found in namespace \"{}\"; see the sandboxes there with "
            "\"rossoctl sandbox list -n {}\"",
            options.name, ns, ns));
    app::Agent agent{{model::WorkloadType::Sandbox, ref}, *sandbox};
    if (app::printObjects(context.out(), format, {agent}, true)) return 0;
    std::string pod = app::agentPodName(client, agent);
    auto table = app::sandboxTable(false);
    app::addSandboxRow(table, *sandbox, pod, context.clock().now(), false);
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

void registerSandboxGet(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<GetOptions>();
    auto* command = sandbox.add_subcommand("get", "Show one sandbox: Ready, reason, pod, age");
    command->add_option("name", options->name, "Sandbox name")->required();
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox get orders -n team1\n"
        "  rossoctl sandbox get orders -o wide\n"
        "  rossoctl sandbox get orders -o yaml\n"
        "\n"
        "Exit codes: 0 found, 1 not found or API error, 2 invalid arguments.");
    onRun(command, host, options, &runGet);
}

}  // namespace rossoctl::commands
