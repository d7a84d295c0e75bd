#include "command.hpp"

namespace rossoctl::commands {

void addOutputFlags(CLI::App* command, OutputFlags& flags, const std::string& allowed) {
    command->add_option("-o,--output", flags.output,
                        "Output format: " + allowed + "|jsonpath=TEMPLATE|custom-columns=SPEC");
    command->add_flag("--no-headers", flags.noHeaders, "Omit table headers");
    addShowManagedFieldsFlag(command, flags.showManagedFields);
    command->add_option("--sort-by", flags.sortBy,
                        "Sort by a JSONPath, e.g. --sort-by=.metadata.creationTimestamp");
}

void addShowManagedFieldsFlag(CLI::App* command, bool& show) {
    command->add_flag("--show-managed-fields", show,
                      "Keep metadata.managedFields in json and yaml output");
}

bool printJsonOrYaml(std::ostream& out, ui::OutputFormat format, nlohmann::json document,
                     bool showManagedFields) {
    if (format != ui::OutputFormat::Json && format != ui::OutputFormat::Yaml) return false;
    if (!showManagedFields) document = ui::withoutManagedFields(std::move(document));
    if (format == ui::OutputFormat::Json)
        ui::printJson(out, document);
    else
        ui::printYaml(out, document);
    return true;
}

}  // namespace rossoctl::commands
