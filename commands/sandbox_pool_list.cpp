// rossoctl sandbox pool list: every SandboxWarmPool (rossoctl's, upstream's manifests', another
// tool's) with how many of its sandboxes are ready and what its pods run.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/run/named_pool.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/ui/jsonpath.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

constexpr const char* kTypeName = "sandboxwarmpool.extensions.agents.x-k8s.io";

struct PoolListOptions {
    bool allNamespaces = false;
    std::string selector;
    OutputFlags output;
};

std::string stringAt(const json& object, const char* key) {
    const auto found = object.is_object() ? object.find(key) : object.end();
    return object.is_object() && found != object.end() && found->is_string()
               ? found->get<std::string>()
               : "";
}

// A member that is an object, else an empty one: the server's fields may be of any type.
json objectAt(const json& object, const char* key) {
    const auto found = object.is_object() ? object.find(key) : object.end();
    return object.is_object() && found != object.end() && found->is_object() ? *found
                                                                             : json::object();
}

std::string countAt(const json& object, const char* key, const std::string& unset) {
    const auto found = object.is_object() ? object.find(key) : object.end();
    // Written as the server sent it (a uint64 past long long's range too), digits only.
    return object.is_object() && found != object.end() && found->is_number_integer() ? found->dump()
                                                                                     : unset;
}

ui::Table poolTable(bool allNamespaces) {
    ui::Table table;
    table.headers = {"NAME",          "READY", "IMAGE",    "CPU",     "MEMORY",
                     "RUNTIME-CLASS", "AGE",   "TEMPLATE", "WORKDIR", "MANAGED-BY"};
    table.wideOnly = {false, false, false, false, false, false, false, true, true, true};
    if (allNamespaces) {
        table.headers.insert(table.headers.begin(), "NAMESPACE");
        table.wideOnly.insert(table.wideOnly.begin(), false);
    }
    return table;
}

void addPoolRow(ui::Table& table, const app::run::WarmPoolEntry& entry, bool allNamespaces,
                std::chrono::system_clock::time_point now) {
    const json& pool = entry.pool;
    const json metadata = objectAt(pool, "metadata");
    const json spec = objectAt(pool, "spec");
    const json status = objectAt(pool, "status");
    const auto created = kube::parseTimestamp(stringAt(metadata, "creationTimestamp"));
    const std::string age =
        created ? ui::formatAge(std::chrono::duration_cast<std::chrono::seconds>(now - *created))
                : "<unknown>";
    // READY as a Deployment shows it: ready / wanted (the CRD's default for replicas is 1).
    const std::string ready =
        countAt(status, "readyReplicas", "0") + "/" + countAt(spec, "replicas", "1");
    const auto value = [](const std::string& text) { return text.empty() ? "<none>" : text; };
    std::vector<std::string> row = {stringAt(metadata, "name"), ready};
    if (entry.shape) {
        const auto& shape = entry.shape->shape;
        row.insert(row.end(), {value(shape.image), value(shape.cpu), value(shape.memory),
                               value(shape.runtimeClass)});
    } else {
        row.insert(row.end(), {"<no template>", "", "", ""});
    }
    const json labels = objectAt(metadata, "labels");
    row.insert(row.end(), {age, value(stringAt(objectAt(spec, "sandboxTemplateRef"), "name")),
                           entry.shape ? value(entry.shape->shape.workdir) : "",
                           value(stringAt(labels, model::kManagedByLabel))});
    if (allNamespaces) row.insert(row.begin(), stringAt(metadata, "namespace"));
    table.rows.push_back(std::move(row));
}

// The pool as -o json/yaml shows it: typed (a List's items may come without), managedFields
// hidden unless asked for.
json poolShown(json pool, bool showManagedFields) {
    if (!showManagedFields) pool = ui::withoutManagedFields(std::move(pool));
    pool["apiVersion"] = app::run::sandboxWarmPools().apiVersion();
    pool["kind"] = "SandboxWarmPool";
    return pool;
}

int runPoolList(app::Context& context, PoolListOptions& options) {
    // validate
    const auto format = listOutputFormat(options.output);
    std::ostringstream ignored;  // a bad template or --sort-by: a usage error, nothing sent
    printTemplate(ignored, options.output, {}, false, false);

    // complete
    const std::string ns = options.allNamespaces ? "" : context.namespaceName();

    // run
    if (!context.discovery().isServed(app::run::kExtensionsGroup)) {
        context.err() << "No warm pools: SandboxWarmPool (" << app::run::kExtensionsGroup
                      << ") is not served here; sandbox pool keeps bare warm pods instead "
                         "(kubectl get pods -l "
                      << app::run::kPoolLabel << "=" << app::run::kPoolWarm << ")\n";
        if (format == ui::OutputFormat::Json || format == ui::OutputFormat::Yaml)
            ui::printJsonOrYaml(context.out(), format, ui::asList(json::array()), false);
        return 0;
    }
    // Only the table shows what the templates run: -o json, yaml and name are the pools.
    const bool tabular = format == ui::OutputFormat::Table || format == ui::OutputFormat::Wide;
    auto entries = app::run::listWarmPools(context.client(), ns, options.selector,
                                           tabular && !isTemplateOutput(options.output.output));
    if (!options.output.sortBy.empty()) {
        std::vector<json> pools;
        for (const auto& entry : entries) pools.push_back(entry.pool);
        ui::checkSortField(pools, options.output.sortBy);
        std::stable_sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) {
            return ui::lessByPath(a.pool, b.pool, options.output.sortBy);
        });
    }
    json items = json::array();
    for (const auto& entry : entries)
        items.push_back(poolShown(entry.pool, options.output.showManagedFields));
    if (printTemplate(context.out(), options.output, {items.begin(), items.end()}, false,
                      context.streams().outIsTty))
        return 0;
    if (ui::printJsonOrYaml(context.out(), format, ui::asList(items), true)) return 0;
    if (format == ui::OutputFormat::Name) {
        ui::printNames(context.out(), items, kTypeName);
        return 0;
    }
    if (entries.empty()) {
        context.err() << (ns.empty() ? std::string("No warm pools found.")
                                     : "No warm pools found in namespace \"" + ns + "\".")
                      << " Make one with: rossoctl sandbox pool NAME --size N\n";
        return 0;
    }
    auto table = poolTable(options.allNamespaces);
    for (const auto& entry : entries)
        addPoolRow(table, entry, options.allNamespaces, context.clock().now());
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

CLI::App* registerSandboxPoolList(CLI::App& pool, CommandHost& host) {
    auto options = std::make_shared<PoolListOptions>();
    auto* command = pool.add_subcommand(
        "list", "List warm pools (SandboxWarmPools) with ready/wanted and what their pods run");
    command->alias("ls");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "List the warm pools of every namespace");
    addSelectorFlag(command, options->selector);
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox pool list -n team1\n"
        "  rossoctl sandbox pool list -A -o wide\n"
        "  rossoctl sandbox pool list -n team1 -o name\n"
        "\n"
        "Every SandboxWarmPool is listed, whoever made it (rossoctl sandbox pool, upstream's\n"
        "manifests, another tool): READY is its ready sandboxes / the number it keeps; IMAGE,\n"
        "CPU, MEMORY and RUNTIME-CLASS are what its SandboxTemplate's first container runs\n"
        "(sandbox run --pool=NAME takes them). -o wide adds the template, the working\n"
        "directory and who manages the pool. Bare warm pods (the fallback where SandboxWarmPool\n"
        "is not served) have no name and are not listed.\n"
        "Exit codes: 0 listed, 1 API error, 2 invalid arguments.");
    onRun(command, host, options, &runPoolList);
    return command;
}

}  // namespace rossoctl::commands
