// rossoctl version: the client's version, the server's from /version, and the agent-sandbox
// API versions it serves.
#include <fmt/format.h>

#include <optional>

#include "registry.hpp"
#include "rossoctl/app/server_version.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct VersionOptions {
    bool clientOnly = false;
    std::string output;
};

nlohmann::json clientVersion() {
    return {{"gitVersion", std::string("v") + ROSSOCTL_VERSION},
            {"compiler", "gcc"},
            {"platform", "linux/amd64"}};
}

// "agents.x-k8s.io v1beta1 (preferred) v1alpha1; extensions.agents.x-k8s.io v1beta1": the
// server's words, escaped as every table cell is.
std::string servedGroupsLine(const std::vector<app::ServedGroup>& groups,
                             const std::vector<app::UnreadGroup>& unread) {
    if (groups.empty() && unread.empty()) return "none served (is agent-sandbox installed?)";
    std::string line;
    for (const auto& group : unread) {
        if (!line.empty()) line += "; ";
        line += ui::escapeForTerminal(group.name) + " unknown (" +
                ui::escapeForTerminal(group.error) + ")";
    }
    for (const auto& group : groups) {
        if (!line.empty()) line += "; ";
        line += ui::escapeForTerminal(group.name);
        for (const auto& version : group.versions) {
            line += ' ' + ui::escapeForTerminal(version);
            if (version == group.preferredVersion && group.versions.size() > 1)
                line += " (preferred)";
        }
    }
    return line;
}

int runVersion(app::Context& context, VersionOptions& options) {
    // validate
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"json", "yaml"});
    // run
    nlohmann::json result = {{"clientVersion", clientVersion()}};
    std::optional<app::ServerVersion> server;
    if (!options.clientOnly) {
        server = app::readServerVersion(context);
        result["serverVersion"] = server->version;
        result["agentSandbox"] = json::array();
        for (const auto& group : server->agentSandbox)
            result["agentSandbox"].push_back({{"group", group.name},
                                              {"versions", group.versions},
                                              {"preferredVersion", group.preferredVersion}});
        for (const auto& group : server->unread)
            result["agentSandbox"].push_back({{"group", group.name}, {"error", group.error}});
    }
    if (format == ui::OutputFormat::Json) {
        ui::printJson(context.out(), result);
    } else if (format == ui::OutputFormat::Yaml) {
        ui::printYaml(context.out(), result);
    } else {
        context.out() << "Client Version: "
                      << result["clientVersion"]["gitVersion"].get<std::string>() << '\n';
        // The server's words: escaped, as every table cell is; anything but a string is unknown.
        if (server) {
            const json& version = server->version;
            const auto git = version.is_object() ? version.find("gitVersion") : version.end();
            context.out() << "Server Version: "
                          << (git != version.end() && git->is_string()
                                  ? ui::escapeForTerminal(git->get_ref<const std::string&>())
                                  : std::string("unknown"))
                          << '\n';
            context.out() << "Agent Sandbox APIs: "
                          << servedGroupsLine(server->agentSandbox, server->unread) << '\n';
        }
    }
    return 0;
}

}  // namespace

void registerVersion(CLI::App& root, CommandHost& host) {
    root.set_version_flag("--version", "rossoctl v" ROSSOCTL_VERSION, "Print the client version");
    auto options = std::make_shared<VersionOptions>();
    auto* command = root.add_subcommand(
        "version", "Print the client and server versions and the agent-sandbox APIs served");
    command->add_flag("--client", options->clientOnly, "Client version only (no request)");
    command->add_option("-o,--output", options->output, "Output format: json|yaml");
    command->footer(
        "Examples:\n"
        "  rossoctl version\n"
        "  rossoctl version --client -o json");
    onRun(command, host, options, &runVersion);
}

}  // namespace rossoctl::commands
