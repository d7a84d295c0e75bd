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

}  // namespace rossoctl::commands
