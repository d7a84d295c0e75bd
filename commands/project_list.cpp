// rossoctl project list: the namespaces rossoctl made into sandbox projects.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/ui/jsonpath.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct ProjectListOptions {
    std::string selector;
    OutputFlags output;
};

int runProjectList(app::Context& context, ProjectListOptions& options) {
    auto format = ui::OutputFormat::Table;
    const bool templated = isTemplateOutput(options.output.output);
    if (!options.output.output.empty() && !templated)
        format = ui::parseOutputFormat(options.output.output);
    std::ostringstream ignored;  // a bad template or --sort-by: a usage error, nothing sent
    printTemplate(ignored, options.output, {}, false);
    kube::ListOptions listOptions;
    listOptions.labelSelector = std::string(model::kSandboxProjectLabel) + "=true" +
                                (options.selector.empty() ? "" : "," + options.selector);
    auto list = context.client().list(kube::resources::namespaces(), "", listOptions);
    json items = list.value("items", json::array());
    for (auto& item : items) {
        if (!options.output.showManagedFields) item = ui::withoutManagedFields(std::move(item));
        item["apiVersion"] = "v1";
        item["kind"] = "Namespace";
    }
    if (!options.output.sortBy.empty()) {
        std::vector<json> sorted(items.begin(), items.end());
        ui::sortByPath(sorted, options.output.sortBy);
        items = json(sorted);
    }
    if (printTemplate(context.out(), options.output, {items.begin(), items.end()}, false)) return 0;
    switch (format) {
        case ui::OutputFormat::Json:
            ui::printJson(context.out(), ui::asList(items));
            return 0;
        case ui::OutputFormat::Yaml:
            ui::printYaml(context.out(), ui::asList(items));
            return 0;
        case ui::OutputFormat::Name:
            ui::printNames(context.out(), items, "namespace");
            return 0;
        default:
            break;
    }
    if (items.empty()) {
        context.err() << "No projects found; create one with \"rossoctl project create NAME\"\n";
        return 0;
    }
    ui::Table table{{"NAME", "STATUS", "POD-SECURITY", "DEFAULT-LIFETIME", "AGE", "MANAGED-BY"},
                    {},
                    {false, false, false, false, false, true}};
    for (const auto& item : items) {
        const auto& metadata = item["metadata"];
        auto labels = metadata.value("labels", json::object());
        auto annotations = metadata.value("annotations", json::object());
        auto created = kube::parseTimestamp(metadata.value("creationTimestamp", ""));
        std::string age = created ? ui::formatAge(std::chrono::duration_cast<std::chrono::seconds>(
                                        context.clock().now() - *created))
                                  : "<unknown>";
        table.rows.push_back({metadata.value("name", ""),
                              item.value("status", json::object()).value("phase", ""),
                              labels.value("pod-security.kubernetes.io/enforce", "-"),
                              annotations.value(model::kDefaultLifetimeAnnotation, "-"), age,
                              labels.value(model::kManagedByLabel, "-")});
    }
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

void registerProjectList(CLI::App& project, CommandHost& host) {
    auto options = std::make_shared<ProjectListOptions>();
    auto* command = project.add_subcommand(
        "list", "List sandbox projects (namespaces labelled rossoctl.dev/sandbox-project=true)");
    command->alias("ls");
    addSelectorFlag(command, options->selector);
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl project list\n"
        "  rossoctl project list -o name\n");
    onRun(command, host, options, &runProjectList);
}

}  // namespace rossoctl::commands
