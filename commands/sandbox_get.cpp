// rossoctl sandbox get S...: sandboxes with whether they are Ready, why not, and their pods.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

struct SandboxGetOptions {
    std::vector<std::string> names;  // NAME or sandbox/NAME, as -o name prints them
    OutputFlags output;
};

// The names of the sandboxes in ns, for a did-you-mean; none when they cannot be listed.
std::vector<std::string> sandboxNames(kube::Client& client, const kube::ResourceRef& ref,
                                      const std::string& ns) {
    std::vector<std::string> names;
    try {
        for (const auto& item : client.list(ref, ns).value("items", nlohmann::json::array()))
            names.push_back(item.value("metadata", nlohmann::json::object()).value("name", ""));
    } catch (const kube::ApiError&) {
        // the message without a suggestion is still right
    }
    return names;
}

int runSandboxGet(app::Context& context, SandboxGetOptions& options) {
    // validate
    const auto names = objectNames(options.names, {sandboxType()}, "sandbox");
    for (const auto& name : names) model::validateDnsSubdomain(name, "sandbox name");
    auto format = listOutputFormat(options.output);
    checkTemplateOutput(options.output);  // a usage error, before anything is sent
    // complete
    const std::string ns = context.namespaceName();
    auto ref = context.discovery().sandboxes();
    // run: every name is looked up; a missing one is reported after the found ones are printed
    auto& client = context.client();
    std::vector<app::Agent> found;
    std::vector<std::string> missing;
    for (const auto& name : names) {
        auto sandbox = client.getIfExists(ref, ns, name);
        if (sandbox)
            found.push_back({{model::WorkloadType::Sandbox, ref}, *sandbox});
        else
            missing.push_back(name);
    }
    std::vector<nlohmann::json> objects;
    for (const auto& agent : found) objects.push_back(agent.object);
    const bool single = names.size() == 1;
    const bool printed =
        found.empty() ||
        printTemplate(context.out(), options.output, objects, single, context.streams().outIsTty) ||
        app::printObjects(context.out(), format, found, single, options.output.showManagedFields);
    if (!printed) {
        auto table = app::sandboxTable(false);
        for (const auto& agent : found)
            app::addSandboxRow(table, agent.object, app::agentPod(client, agent),
                               context.clock().now(), false);
        ui::printTable(context.out(), table, options.output.noHeaders,
                       format == ui::OutputFormat::Wide);
    }
    const auto known = missing.empty() ? std::vector<std::string>{} : sandboxNames(client, ref, ns);
    for (const auto& name : missing) {
        // The nearest name is the server's (any bytes): the line is escaped on its way out.
        const std::string line =
            fmt::format("error: sandbox \"{}\" not found in namespace \"{}\"; {}", name, ns,
                        app::sandboxNotFoundAdvice(known, ns, name));
        context.err() << ui::escapeErrorLine(line, context.utf8Terminal()) << '\n';
    }
    return missing.empty() ? kExitOk : kExitError;
}

}  // namespace

void registerSandboxGet(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<SandboxGetOptions>();
    auto* command = sandbox.add_subcommand("get", "Show sandboxes: Ready, reason, pod, age");
    command->add_option("name", options->names, "Sandbox names (NAME or sandbox/NAME)")->required();
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox get orders -n team1\n"
        "  rossoctl sandbox get orders billing -o wide\n"
        "  rossoctl sandbox list -o name | xargs rossoctl sandbox get -o yaml\n"
        "\n"
        "Exit codes: 0 found, 1 not found or API error, 2 invalid arguments.");
    onRun(command, host, options, &runSandboxGet);
}

}  // namespace rossoctl::commands
