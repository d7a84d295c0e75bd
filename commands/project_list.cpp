// rossoctl project list: the namespaces rossoctl made into sandbox projects.
#include <fmt/format.h>

#include <utility>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/list_watch.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/ui/jsonpath.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct ProjectListOptions {
    std::string selector;
    bool watch = false;
    bool watchOnly = false;
    OutputFlags output;
};

// -w keeps room in STATUS for Terminating, the phase a project delete brings.
ui::Table projectTable() {
    ui::Table table{{"NAME", "STATUS", "POD-SECURITY", "DEFAULT-LIFETIME", "AGE", "MANAGED-BY"},
                    {},
                    {false, false, false, false, false, true}};
    table.watchWidths = {0, std::string_view("Terminating").size()};
    return table;
}

void addProjectRow(ui::Table& table, const json& item, std::chrono::system_clock::time_point now) {
    const auto& metadata = item["metadata"];
    auto labels = metadata.value("labels", json::object());
    auto annotations = metadata.value("annotations", json::object());
    auto created = kube::parseTimestamp(metadata.value("creationTimestamp", ""));
    std::string age =
        created ? ui::formatAge(std::chrono::duration_cast<std::chrono::seconds>(now - *created))
                : "<unknown>";
    table.rows.push_back({metadata.value("name", ""),
                          item.value("status", json::object()).value("phase", ""),
                          labels.value("pod-security.kubernetes.io/enforce", "-"),
                          annotations.value(model::kDefaultLifetimeAnnotation, "-"), age,
                          labels.value(model::kManagedByLabel, "-")});
}

// The namespace as -o json/yaml shows it: typed, managedFields hidden unless asked for.
json shown(json item, bool showManagedFields) {
    if (!showManagedFields) item = ui::withoutManagedFields(std::move(item));
    item["apiVersion"] = "v1";
    item["kind"] = "Namespace";
    return item;
}

// -w/--watch-only: the list (unless --watch-only), then each change as it happens, until
// Ctrl-C (exit 130). The list is one table; each change is a row under its columns.
int watchProjects(app::Context& context, const ProjectListOptions& options,
                  const std::string& selector, ui::OutputFormat format) {
    kube::ListOptions listOptions;
    listOptions.labelSelector = selector;
    auto list = context.client().list(kube::resources::namespaces(), "", listOptions);
    ui::StreamingTable rows(context.out(), options.output.noHeaders,
                            format == ui::OutputFormat::Wide);
    WatchedTemplate templated(context.out(), options.output, context.streams().outIsTty);
    bool headerDone = false;
    auto print = [&](const std::vector<json>& items) {
        if (format == ui::OutputFormat::Table || format == ui::OutputFormat::Wide) {
            auto table = projectTable();
            for (const auto& item : items) addProjectRow(table, item, context.clock().now());
            rows.print(table);
            context.out() << std::flush;  // a pipe sees each change as it happens
            return;
        }
        std::vector<json> objects;
        for (const auto& item : items)
            objects.push_back(shown(item, options.output.showManagedFields));
        if (!templated.print(objects)) {
            for (const auto& object : objects) {
                if (format == ui::OutputFormat::Json) {
                    ui::printJson(context.out(), object);
                } else if (format == ui::OutputFormat::Yaml) {
                    // One stream: kubectl separates documents, with nothing before the first.
                    if (std::exchange(headerDone, true)) context.out() << "---\n";
                    ui::printYaml(context.out(), object);
                } else {
                    ui::printNames(context.out(), json::array({object}), "namespace");
                }
            }
        }
        context.out() << std::flush;
    };
    if (!options.watchOnly) {
        const json items = list.value("items", json::array());
        print({items.begin(), items.end()});
    }
    app::followList(context.client(), context.clock(), kube::resources::namespaces(), "", selector,
                    context.cancelFlag(), std::move(list), true,
                    [&](const json& item) { print({item}); });
    return kExitCancelled;
}

int runProjectList(app::Context& context, ProjectListOptions& options) {
    auto format = ui::OutputFormat::Table;
    if (!options.output.output.empty()) format = listOutputFormat(options.output);
    checkTemplateOutput(options.output);  // a usage error, before anything is sent
    if (options.watchOnly) options.watch = true;
    const std::string selector = std::string(model::kSandboxProjectLabel) + "=true" +
                                 (options.selector.empty() ? "" : "," + options.selector);
    if (options.watch) return watchProjects(context, options, selector, format);
    kube::ListOptions listOptions;
    listOptions.labelSelector = selector;
    auto list = context.client().list(kube::resources::namespaces(), "", listOptions);
    json items = list.value("items", json::array());
    for (auto& item : items) item = shown(std::move(item), options.output.showManagedFields);
    if (!options.output.sortBy.empty()) {
        std::vector<json> sorted(items.begin(), items.end());
        ui::sortByPath(sorted, options.output.sortBy);
        items = json(sorted);
    }
    if (printTemplate(context.out(), options.output, {items.begin(), items.end()}, false,
                      context.streams().outIsTty))
        return 0;
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
    auto table = projectTable();
    for (const auto& item : items) addProjectRow(table, item, context.clock().now());
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
    command->add_flag("-w,--watch", options->watch,
                      "After listing, print each change as it happens (until Ctrl-C)");
    command->add_flag("--watch-only", options->watchOnly,
                      "Print only the changes, without listing first");
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl project list\n"
        "  rossoctl project list -o name\n"
        "  rossoctl project list -w\n"
        "\n"
        "Exit codes: 0 listed, 1 API error, 2 invalid arguments, 130 a --watch ended by Ctrl-C.");
    onRun(command, host, options, &runProjectList);
}

}  // namespace rossoctl::commands
