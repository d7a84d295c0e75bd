// rossoctl version: the client's version, and the server's from /version.
#include <fmt/format.h>

#include "registry.hpp"
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

int runVersion(app::Context& context, VersionOptions& options) {
    // validate
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"json", "yaml"});
    // run
    nlohmann::json result = {{"clientVersion", clientVersion()}};
    if (!options.clientOnly) result["serverVersion"] = context.client().getPath("/version");
    if (format == ui::OutputFormat::Json) {
        ui::printJson(context.out(), result);
    } else if (format == ui::OutputFormat::Yaml) {
        ui::printYaml(context.out(), result);
    } else {
        context.out() << "Client Version: "
                      << result["clientVersion"]["gitVersion"].get<std::string>() << '\n';
        // The server's words: escaped, as every table cell is; anything but a string is unknown.
        if (result.contains("serverVersion")) {
            const json& server = result["serverVersion"];
            const auto git = server.find("gitVersion");
            context.out() << "Server Version: "
                          << (git != server.end() && git->is_string()
                                  ? ui::escapeForTerminal(git->get_ref<const std::string&>())
                                  : std::string("unknown"))
                          << '\n';
        }
    }
    return 0;
}

}  // namespace

void registerVersion(CLI::App& root, CommandHost& host) {
    root.set_version_flag("--version", "rossoctl v" ROSSOCTL_VERSION, "Print the client version");
    auto options = std::make_shared<VersionOptions>();
    auto* command = root.add_subcommand("version", "Print the client and server versions");
    command->add_flag("--client", options->clientOnly, "Client version only (no request)");
    command->add_option("-o,--output", options->output, "Output format: json|yaml");
    command->footer(
        "Examples:\n"
        "  rossoctl version\n"
        "  rossoctl version --client -o json");
    onRun(command, host, options, &runVersion);
}

}  // namespace rossoctl::commands
