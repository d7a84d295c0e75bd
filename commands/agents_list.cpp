// rossoctl agents list: every rossoctl-managed agent, whatever workload runs it.
#include <exception>
#include <map>
#include <set>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/list_watch.hpp"
#include "rossoctl/ui/jsonpath.hpp"

namespace rossoctl::commands {
namespace {

struct ListOptions {
    bool allNamespaces = false;
    std::string selector;
    bool watch = false;
    bool watchOnly = false;
    OutputFlags output;
};

// -w/--watch-only: the list (unless --watch-only), then each change of any agent kind as it
// happens, until Ctrl-C (exit 130). The list is one table; each change is a row under its
// columns.
int watchAgents(app::Context& context, const ListOptions& options, const std::string& ns,
                ui::OutputFormat format) {
    const bool table = format == ui::OutputFormat::Table || format == ui::OutputFormat::Wide;
    ui::StreamingTable rows(context.out(), options.output.noHeaders,
                            format == ui::OutputFormat::Wide);
    WatchedTemplate templated(context.out(), options.output, context.streams().outIsTty);
    bool headerDone = false;
    // A change of an agent that is not ready comes with no word of its pod's: the pod is read
    // again (ImagePullBackOff, as the plain list and sandbox list -w show it; walk 6 MINOR 7),
    // on a client of its own, since the watches' connections are busy.
    std::unique_ptr<kube::Client> podClient;
    auto print = [&](const std::vector<app::Agent>& agents) {
        if (table) {
            std::map<std::string, app::PodSummary> pods;
            try {
                if (!podClient) podClient = context.newClient();
                pods = app::podsOfUnreadyAgents(*podClient, ns, agents);
            } catch (const std::exception&) {
                pods.clear();  // the row without its pod's STATUS, as before
            }
            auto page = app::agentTable(options.allNamespaces, false);
            for (const auto& agent : agents) {
                const auto pod = pods.find(agent.namespaceName() + "/" + agent.name());
                app::addAgentRow(page, agent,
                                 pod == pods.end() ? std::nullopt : std::optional(pod->second),
                                 context.clock().now(), options.allNamespaces, false);
            }
            rows.print(page);
        } else if (isTemplateOutput(options.output.output)) {
            std::vector<nlohmann::json> objects;
            for (const auto& agent : agents) objects.push_back(agent.object);
            templated.print(objects);
        } else {
            for (const auto& agent : agents) {
                // One stream: kubectl separates documents, with nothing before the first.
                if (format == ui::OutputFormat::Yaml && headerDone) context.out() << "---\n";
                headerDone = true;
                app::printObjects(context.out(), format, {agent}, true,
                                  options.output.showManagedFields);
            }
        }
        context.out() << std::flush;  // a pipe sees each change as it happens
    };
    app::followAgents(
        context.client(), [&] { return context.newClient(); }, context.clock(), context.discovery(),
        ns, options.selector, context.cancelFlag(), options.watchOnly, print);
    return kExitCancelled;
}

int runList(app::Context& context, ListOptions& options) {
    // validate
    auto format = listOutputFormat(options.output);
    checkTemplateOutput(options.output);  // a usage error, before anything is sent
    if (options.watchOnly) options.watch = true;
    // complete
    const std::string ns = options.allNamespaces ? "" : context.namespaceName();
    // run
    if (options.watch) return watchAgents(context, options, ns, format);
    auto agents = app::listAgents(context.client(), context.discovery(), ns, options.selector);
    if (!options.output.sortBy.empty()) {
        std::vector<nlohmann::json> sortable;
        for (const auto& agent : agents) sortable.push_back(agent.object);
        ui::checkSortField(sortable, options.output.sortBy);
    }
    if (!options.output.sortBy.empty())
        std::stable_sort(agents.begin(), agents.end(),
                         [&](const app::Agent& a, const app::Agent& b) {
                             return ui::lessByPath(a.object, b.object, options.output.sortBy);
                         });
    std::vector<nlohmann::json> objects;
    for (const auto& agent : agents) objects.push_back(agent.object);
    if (printTemplate(context.out(), options.output, objects, false, context.streams().outIsTty))
        return 0;
    if (app::printObjects(context.out(), format, agents, false, options.output.showManagedFields))
        return 0;
    if (agents.empty()) {
        context.err() << (ns.empty() ? std::string("No agents found.")
                                     : "No agents found in namespace \"" + ns + "\".")
                      << '\n';
        return 0;
    }
    auto table = app::agentTable(options.allNamespaces, false);
    const auto now = context.clock().now();
    // An agent that is not ready shows its pod's STATUS when that says more (ImagePullBackOff).
    const auto pods = app::podsOfUnreadyAgents(context.client(), ns, agents);
    // One object of a kind per name: a server repeating one would copy its pod's STATUS into
    // each repeat, so only the first gets it.
    std::set<std::pair<std::string, std::string>> given;
    for (const auto& agent : agents) {
        const std::string key = agent.namespaceName() + "/" + agent.name();
        const auto pod = pods.find(key);
        const bool first = given.emplace(agent.kind.ref.resource, key).second;
        app::addAgentRow(table, agent,
                         pod == pods.end() || !first ? std::nullopt : std::optional(pod->second),
                         now, options.allNamespaces, false);
    }
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

void registerAgentsList(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<ListOptions>();
    auto* command = agents.add_subcommand("list", "List agents of every deployment type");
    command->alias("ls");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "List agents in every namespace");
    addSelectorFlag(command, options->selector);
    command->add_flag("-w,--watch", options->watch,
                      "After listing, print each change as it happens (until Ctrl-C)");
    command->add_flag("--watch-only", options->watchOnly,
                      "Print only the changes, without listing first");
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Agents are the deployments, statefulsets, jobs and sandboxes labelled\n"
        "app.kubernetes.io/managed-by=rossoctl.\n\n"
        "Examples:\n"
        "  rossoctl agents list -n team1\n"
        "  rossoctl agents list -A -o wide\n"
        "  rossoctl agents list -o name --no-headers\n"
        "  rossoctl agents list -n team1 -w\n"
        "\n"
        "Exit codes: 0 listed, 1 API error, 2 invalid arguments, 130 a --watch ended by Ctrl-C.");
    onRun(command, host, options, &runList);
}

}  // namespace rossoctl::commands
