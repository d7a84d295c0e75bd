// rossoctl sandbox top: CPU, memory, disk (writable layers, emptyDirs) and processes of each pod,
// from the kubelet's Summary API (no metrics-server).
#include "rossoctl/app/sandbox_top.hpp"

#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct TopOptions {
    std::vector<std::string> names;
    bool allNamespaces = false;
    bool includePool = false;
    std::string output;
    bool noHeaders = false;
};

// kubectl top's units: millicores, and bytes in the largest binary unit that keeps a whole
// number above zero (Ki, Mi, Gi).
std::string cores(const std::optional<uint64_t>& nanoCores) {
    return nanoCores ? fmt::format("{}m", (*nanoCores + 500'000) / 1'000'000) : "-";
}
std::string bytes(const std::optional<uint64_t>& value) {
    if (!value) return "-";
    constexpr uint64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024;
    if (*value >= 10 * kGi) return fmt::format("{}Gi", *value / kGi);
    if (*value >= kMi) return fmt::format("{}Mi", *value / kMi);
    if (*value >= kKi) return fmt::format("{}Ki", *value / kKi);
    return fmt::format("{}", *value);
}
std::string count(const std::optional<uint64_t>& value) {
    return value ? std::to_string(*value) : "-";
}

// DISK: what the pod wrote on the node, its writable layers and its emptyDirs together.
std::optional<uint64_t> diskBytes(const app::PodUsage& usage) {
    if (!usage.writableLayerBytes && !usage.emptyDirBytes) return std::nullopt;
    const uint64_t layers = usage.writableLayerBytes.value_or(0);
    const uint64_t volumes = usage.emptyDirBytes.value_or(0);
    return layers + volumes < layers ? UINT64_MAX : layers + volumes;
}

json orNull(const std::optional<uint64_t>& value) {
    return value ? json(*value) : json(nullptr);
}

json asJson(const std::vector<app::SandboxUsage>& rows) {
    json items = json::array();
    for (const auto& row : rows) {
        items.push_back({{"namespace", row.namespaceName},
                         {"sandbox", row.sandbox},
                         {"pod", row.pod.empty() ? json(nullptr) : json(row.pod)},
                         {"node", row.node.empty() ? json(nullptr) : json(row.node)},
                         {"time", row.usage.time.empty() ? json(nullptr) : json(row.usage.time)},
                         {"cpuNanoCores", orNull(row.usage.cpuNanoCores)},
                         {"memoryWorkingSetBytes", orNull(row.usage.memoryWorkingSet)},
                         {"writableLayerBytes", orNull(row.usage.writableLayerBytes)},
                         {"emptyDirBytes", orNull(row.usage.emptyDirBytes)},
                         {"processes", orNull(row.usage.processes)}});
    }
    return {{"kind", "SandboxUsageList"}, {"items", items}};
}

int runTop(app::Context& context, TopOptions& options) {
    // validate
    const auto format = ui::parseOutputFormat(options.output.empty() ? "table" : options.output,
                                              {"table", "wide", "json"});
    for (auto& name : options.names) {
        name = objectName(name, {sandboxType()}, "sandbox");
        model::validateDnsSubdomain(name, "sandbox name");
    }
    if (options.allNamespaces && !options.names.empty())
        throw UsageError(
            "give sandbox names or -A, not both (names are looked up in one "
            "namespace: -n)");

    // complete
    app::TopRequest request;
    request.sandboxes = context.discovery().sandboxes();
    request.namespaceName = options.allNamespaces ? "" : context.namespaceName();
    request.names = options.names;

    // run
    app::PoolFilter pool{options.includePool};
    std::vector<std::string> missing;  // shown after the rows of the others, as get does
    const auto rows = app::sandboxUsage(context.client(), request, pool, &missing);
    pool.note(context.err(), "shown", "show");
    const auto tellMissing = [&] {
        for (const auto& name : missing)
            context.err() << ui::escapeErrorLine(
                                 fmt::format(
                                     "error: sandbox \"{}\" not found in namespace \"{}\"; "
                                     "{}",
                                     name, request.namespaceName,
                                     app::sandboxNotFoundAdvice(context.client(), request.sandboxes,
                                                                request.namespaceName, name)),
                                 context.utf8Terminal())
                          << '\n';
        return missing.empty() ? kExitOk : kExitError;
    };
    if (format == ui::OutputFormat::Json) {
        if (!rows.empty() || missing.empty()) ui::printJson(context.out(), asJson(rows));
        return tellMissing();
    }
    if (!missing.empty() && rows.empty()) return tellMissing();
    if (rows.empty()) {
        context.err() << (request.namespaceName.empty() ? std::string("No sandboxes found.")
                                                        : "No sandboxes found in namespace \"" +
                                                              request.namespaceName + "\".")
                      << '\n';
        return 0;
    }
    ui::Table table;
    if (options.allNamespaces) table.headers.push_back("NAMESPACE");
    for (const char* header :
         {"NAME", "POD", "CPU(cores)", "MEMORY(bytes)", "DISK(bytes)", "PROCESSES", "NODE"})
        table.headers.push_back(header);
    table.wideOnly.assign(table.headers.size(), false);
    table.wideOnly.back() = true;
    for (const auto& row : rows) {
        std::vector<std::string> cells;
        if (options.allNamespaces) cells.push_back(row.namespaceName);
        cells.insert(cells.end(), {row.sandbox, row.pod.empty() ? "<none>" : row.pod,
                                   cores(row.usage.cpuNanoCores), bytes(row.usage.memoryWorkingSet),
                                   bytes(diskBytes(row.usage)), count(row.usage.processes),
                                   row.node.empty() ? "<none>" : row.node});
        table.rows.push_back(std::move(cells));
    }
    ui::printTable(context.out(), table, options.noHeaders, format == ui::OutputFormat::Wide);
    return tellMissing();
}

}  // namespace

void registerSandboxTop(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<TopOptions>();
    auto* command = sandbox.add_subcommand(
        "top", "Show CPU, memory, disk (writable layers and emptyDirs) and processes of sandboxes");
    command->add_option("sandboxes", options->names, "Sandbox names (default: all in -n)");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "Every sandbox in every namespace");
    command->add_flag("--include-pool", options->includePool,
                      "Also show a warm pool's spare sandboxes (left out and counted otherwise)");
    command->add_option("-o,--output", options->output, "Output format: table|wide|json");
    command->add_flag("--no-headers", options->noHeaders, "Print the table without its header");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox top -n team1\n"
        "  rossoctl sandbox top orders -o json\n"
        "  rossoctl sandbox top -A -o wide\n\n"
        "The figures are the kubelet's own (its Summary API, read through the API server's node\n"
        "proxy: needs get on nodes/proxy, no metrics-server): CPU in millicores, memory as the\n"
        "working set, DISK the containers' writable layers and the pod's emptyDir volumes\n"
        "(/workspace, /tmp: where a hardened sandbox writes), PROCESSES in the pod; - where the\n"
        "kubelet reports no figure (process counts need its cAdvisor container stats).\n"
        "A warm pool's spare sandboxes are left out (and counted on stderr), as sandbox list\n"
        "leaves them out, unless --include-pool or named.\n\n"
        "Exit codes: 0 shown; 1 a sandbox not found, an API error, or nodes/proxy forbidden;\n"
        "2 invalid arguments.");
    onRun(command, host, options, &runTop);
}

}  // namespace rossoctl::commands
