// rossoctl sandbox list: every Sandbox with whether it is Ready, why not, and its pod.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/list_watch.hpp"
#include "rossoctl/app/namespace_hint.hpp"
#include "rossoctl/app/warm_pool.hpp"
#include "rossoctl/ui/jsonpath.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

constexpr int kPageSize = 500;  // kubectl's chunk size

struct SandboxListOptions {
    bool allNamespaces = false;
    bool includePool = false;
    std::string selector;
    bool watch = false;
    bool watchOnly = false;
    OutputFlags output;
};

// Each sandbox's pod, by the sandbox's UID. A UID names one object in a real cluster: a list
// repeating one is a server lying, and each repeat would copy the pod's name into another row, so
// only the first sandbox with a UID gets its pod (the repeats are counted and told).
class PodsByOwner {
  public:
    PodsByOwner(kube::Client& client, const std::string& ns) {
        for (auto& [uid, pod] : app::podsByOwner(client, ns, "agents.x-k8s.io/sandbox-name-hash"))
            pods_.emplace(std::move(uid), std::move(pod));  // newest first: keep the first
    }
    // repeatsAreLies: a list, where a UID comes once; a watch sees the same sandbox change.
    const app::PodSummary& podOf(const nlohmann::json& sandbox, bool repeatsAreLies) {
        static const app::PodSummary none;
        const std::string uid = uidOf(sandbox);
        if (uid.empty()) return none;
        if (repeatsAreLies && !seen_.insert(uid).second) {
            ++repeated_;
            return none;
        }
        const auto pod = pods_.find(uid);
        return pod == pods_.end() ? none : pod->second;
    }
    // Under -w a sandbox's change comes with no word of its pod's (a suspend's pod going, a new
    // sandbox's first pod): its pod is read again, by the selector its status records.
    void refresh(kube::Client& client, const nlohmann::json& sandbox) {
        const std::string uid = uidOf(sandbox);
        const auto status = sandbox.find("status");
        const auto metadata = sandbox.find("metadata");
        if (uid.empty() || status == sandbox.end() || !status->is_object() ||
            metadata == sandbox.end() || !metadata->is_object())
            return;
        const auto selector = status->find("selector");
        const auto ns = metadata->find("namespace");
        if (selector == status->end() || !selector->is_string() || selector->empty() ||
            ns == metadata->end() || !ns->is_string() || ns->empty())
            return;
        pods_.erase(uid);  // no pod shown rather than a stale one if the read fails
        try {
            for (auto& [owner, pod] :
                 app::podsByOwner(client, ns->get<std::string>(), selector->get<std::string>()))
                if (owner == uid) pods_.emplace(owner, std::move(pod));  // newest first
        } catch (const std::exception&) {
            // The next change reads again.
        }
    }
    void note(std::ostream& err) const {
        if (repeated_ > 0)
            err << fmt::format(
                "warning: the server listed {} more sandbox{} under a UID already listed (a UID "
                "names one object); shown without a pod\n",
                repeated_, repeated_ == 1 ? "" : "es");
    }

  private:
    static std::string uidOf(const nlohmann::json& sandbox) {
        const auto metadata = sandbox.find("metadata");
        if (metadata == sandbox.end() || !metadata->is_object()) return "";
        const auto uid = metadata->find("uid");
        return uid != metadata->end() && uid->is_string() ? uid->get<std::string>() : "";
    }
    std::map<std::string, app::PodSummary> pods_;
    std::set<std::string> seen_;
    size_t repeated_ = 0;
};

// -w/--watch-only: the list (unless --watch-only), then each change as it happens, until Ctrl-C
// (exit 130). The list is one table; each change is a row under its columns.
int watchList(app::Context& context, const SandboxListOptions& options,
              const kube::ResourceRef& ref, const std::string& ns, ui::OutputFormat format) {
    auto& client = context.client();
    kube::ListOptions selected;
    selected.labelSelector = options.selector;
    nlohmann::json list = client.list(ref, ns, selected);
    PodsByOwner pods(client, ns);
    const bool table = format == ui::OutputFormat::Table || format == ui::OutputFormat::Wide;
    ui::StreamingTable rows(context.out(), options.output.noHeaders,
                            format == ui::OutputFormat::Wide);
    WatchedTemplate templated(context.out(), options.output, context.streams().outIsTty);
    bool headerDone = false;
    app::PoolFilter pool{options.includePool};
    auto print = [&](std::vector<nlohmann::json> sandboxes) {
        sandboxes.erase(std::remove_if(sandboxes.begin(), sandboxes.end(),
                                       [&](const nlohmann::json& one) { return !pool.keep(one); }),
                        sandboxes.end());
        if (table) {
            auto page = app::sandboxTable(options.allNamespaces, options.includePool);
            for (const auto& sandbox : sandboxes)
                app::addSandboxRow(page, sandbox, pods.podOf(sandbox, false), context.clock().now(),
                                   options.allNamespaces);
            rows.print(page);
        } else if (!templated.print(sandboxes)) {
            for (const auto& sandbox : sandboxes) {
                // One stream: kubectl separates documents, with nothing before the first.
                if (format == ui::OutputFormat::Yaml && headerDone) context.out() << "---\n";
                headerDone = true;
                app::printObjects(context.out(), format,
                                  {{{model::WorkloadType::Sandbox, ref}, sandbox}}, true,
                                  options.output.showManagedFields);
            }
        }
        context.out() << std::flush;  // a pipe sees each change as it happens
    };
    if (!options.watchOnly) {
        const nlohmann::json items = list.value("items", nlohmann::json::array());
        print({items.begin(), items.end()});
        pool.note(context.err());
    }
    // The pod is read again on a client of its own: the watch's connection is busy while its
    // callback runs (the same client crashed in libcurl, the fourth walkthrough's M1).
    std::unique_ptr<kube::Client> podClient;
    app::followList(client, context.clock(), ref, ns, options.selector, context.cancelFlag(),
                    std::move(list), true, [&](const nlohmann::json& sandbox) {
                        if (table) {
                            if (!podClient) podClient = context.newClient();
                            pods.refresh(*podClient, sandbox);
                        }
                        print({sandbox});
                    });
    return kExitCancelled;
}

// A page at a time, keeping only each row: 5,000 sandboxes never sit in memory as JSON.
// The server returns them in namespace/name order, as kubectl shows them.
int printTablePaged(app::Context& context, const SandboxListOptions& options,
                    const kube::ResourceRef& ref, const std::string& ns, ui::OutputFormat format) {
    auto& client = context.client();
    // One pod list for all: the controller labels its pods with the sandbox-name-hash.
    PodsByOwner pods(client, ns);
    auto table = app::sandboxTable(options.allNamespaces, options.includePool);
    const auto now = context.clock().now();
    app::PoolFilter pool{options.includePool};
    auto addRow = [&](const nlohmann::json& sandbox) {
        if (!pool.keep(sandbox)) return;
        app::addSandboxRow(table, sandbox, pods.podOf(sandbox, true), now, options.allNamespaces);
    };
    std::vector<nlohmann::json> sorted;  // --sort-by: every sandbox first, then the rows
    kube::ListOptions paged;
    paged.limit = kPageSize;
    paged.labelSelector = options.selector;
    client.listPages(ref, ns, paged, [&](const nlohmann::json& page) {
        for (const auto& sandbox : page.value("items", nlohmann::json::array())) {
            if (options.output.sortBy.empty())
                addRow(sandbox);
            else
                sorted.push_back(sandbox);
        }
        return true;
    });
    if (!options.output.sortBy.empty()) ui::sortByPath(sorted, options.output.sortBy);
    for (const auto& sandbox : sorted) addRow(sandbox);
    if (table.rows.empty()) {
        context.err() << (ns.empty() ? std::string("No sandboxes found.")
                                     : "No sandboxes found in namespace \"" + ns + "\".")
                      << '\n';
        // A typo in -n lists as empty too: one more request, only on this path, says so.
        if (!ns.empty())
            if (const auto hint = app::missingNamespaceHint(client, ns); !hint.empty())
                context.err() << "note: " << ui::escapeErrorLine(hint, context.utf8Terminal())
                              << '\n';
        pool.note(context.err());
        return 0;
    }
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    pool.note(context.err());
    pods.note(context.err());
    return 0;
}

int runSandboxList(app::Context& context, SandboxListOptions& options) {
    // validate
    auto format = listOutputFormat(options.output);
    checkTemplateOutput(options.output);  // a usage error, before anything is sent
    if (options.watchOnly) options.watch = true;
    // complete
    const std::string ns = options.allNamespaces ? "" : context.namespaceName();
    auto ref = context.discovery().sandboxes();
    // run
    auto& client = context.client();
    if (options.watch) return watchList(context, options, ref, ns, format);
    if (format == ui::OutputFormat::Table || format == ui::OutputFormat::Wide)
        return printTablePaged(context, options, ref, ns, format);
    kube::ListOptions selected;
    selected.labelSelector = options.selector;
    nlohmann::json sandboxes = nlohmann::json::array();
    app::PoolFilter pool{options.includePool};
    nlohmann::json listed = client.list(ref, ns, selected);
    for (auto& sandbox : listed["items"])
        if (pool.keep(sandbox)) sandboxes.push_back(std::move(sandbox));
    pool.note(context.err());
    if (!options.output.sortBy.empty())
        ui::checkSortField({sandboxes.begin(), sandboxes.end()}, options.output.sortBy);
    if (printTemplate(context.out(), options.output, {sandboxes.begin(), sandboxes.end()}, false,
                      context.streams().outIsTty))
        return 0;
    std::vector<app::Agent> objects;
    for (auto& sandbox : sandboxes)
        objects.push_back({{model::WorkloadType::Sandbox, ref}, std::move(sandbox)});
    std::stable_sort(objects.begin(), objects.end(), [&](const app::Agent& a, const app::Agent& b) {
        if (!options.output.sortBy.empty())
            return ui::lessByPath(a.object, b.object, options.output.sortBy);
        return std::make_pair(a.namespaceName(), a.name()) <
               std::make_pair(b.namespaceName(), b.name());
    });
    app::printObjects(context.out(), format, objects, false,
                      options.output.showManagedFields);  // json, yaml or name
    return 0;
}

}  // namespace

void registerSandboxList(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<SandboxListOptions>();
    auto* command = sandbox.add_subcommand("list", "List sandboxes with Ready, reason and pod");
    command->alias("ls");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "List sandboxes in every namespace");
    command->add_flag("--include-pool", options->includePool,
                      "Also list the spare sandboxes a SandboxWarmPool keeps (with their OWNER)");
    addSelectorFlag(command, options->selector);
    command->add_flag("-w,--watch", options->watch,
                      "After listing, print each change as it happens (until Ctrl-C)");
    command->add_flag("--watch-only", options->watchOnly,
                      "Print only the changes, without listing first");
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox list -n team1\n"
        "  rossoctl sandbox list -A -o wide\n"
        "  rossoctl sandbox list -o json\n"
        "  rossoctl sandbox list -n team1 -w\n"
        "  rossoctl sandbox list -n team1 --include-pool\n"
        "\n"
        "A warm pool's spare sandboxes (controlled by a SandboxWarmPool, for sandbox run\n"
        "--pool) are not the project's own: they are left out, in every output format, and\n"
        "counted on stderr, unless --include-pool. A claimed one (OWNER SandboxClaim/...) is\n"
        "a run's and is listed. With -w the list and each change line up under the columns\n"
        "of the first rows printed, as kubectl get -w keeps those of its first page; STATUS\n"
        "and REASON keep room for ContainerCreating and DependenciesNotReady, which a pull or\n"
        "a suspend brings later.\n"
        "Exit codes: 0 listed, 1 API error, 2 invalid arguments, 130 a --watch ended by Ctrl-C.");
    onRun(command, host, options, &runSandboxList);
}

}  // namespace rossoctl::commands
