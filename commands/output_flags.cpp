#include <fmt/format.h>

#include "command.hpp"
#include "conventions.hpp"
#include "rossoctl/errors.hpp"

namespace rossoctl::commands {

ui::OutputFormat listOutputFormat(const OutputFlags& flags) {
    if (isTemplateOutput(flags.output)) return ui::OutputFormat::Json;
    static const std::vector<std::string> kFormats = {"table", "wide", "json", "yaml", "name"};
    try {
        return ui::parseOutputFormat(flags.output, kFormats);
    } catch (const UsageError&) {
        std::vector<std::string> known = kFormats;
        known.insert(known.end(), {"jsonpath", "custom-columns"});
        const std::string nearest = nearestWord(flags.output, known);
        throw UsageError(fmt::format(
            "unsupported output format \"{}\"; use one of: table, wide, json, yaml, name, "
            "jsonpath=TEMPLATE, custom-columns=SPEC{}",
            flags.output, nearest.empty() ? "" : fmt::format(" (did you mean {}?)", nearest)));
    }
}

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

}  // namespace rossoctl::commands
