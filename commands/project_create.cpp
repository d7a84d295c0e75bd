// rossoctl project create: a namespace made safe for sandboxes (DESIGN.md section 3), written
// with server-side apply so running it again converges and finishes a half-done run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "conventions.hpp"
#include "project_common.hpp"
#include "registry.hpp"
#include "rossoctl/app/enforcement_check.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;
namespace resources = kube::resources;

struct ProjectCreateOptions {
    model::ProjectOptions project;
    std::vector<std::string> hosts;
    std::vector<std::string> cidrs;
    bool noDns = false;
    std::string egress = "auto";
    std::string dryRun;  // "", none, client, server
    bool adopt = false;
    bool force = false;
    std::string output;
    bool noCheck = false;
    std::string checkImage = app::EnforcementCheckOptions{}.image;
};

struct WriteResult {
    json object;
    std::string outcome;  // created, configured, unchanged, deleted
};

// The next action, named: a re-run converges, finishing what a failed run left half-way.
std::string finishHint(const std::string& project) {
    return fmt::format("run \"rossoctl project create {}\" again, with the same flags, to finish",
                       project);
}

void validate(ProjectCreateOptions& options) {
    auto& project = options.project;
    for (const auto& host : options.hosts)
        project.allowHosts.push_back(model::parseAllowedHost(host));
    std::set<std::string> seen;
    for (const auto& cidr : options.cidrs) {
        auto canonical = model::parseCidr(cidr);
        if (seen.insert(canonical).second) project.allowCidrs.push_back(canonical);
        // A /0 is every address: the summary's "everything else denied" would not hold.
        if ((canonical == "0.0.0.0/0" || canonical == "::/0") && !options.force)
            throw UsageError(fmt::format(
                "--allow-cidr {} allows egress to every address, so the project would have no "
                "egress boundary; add --force if that is really wanted",
                cidr));
    }
    project.allowDns = !options.noDns;
    project.egress = model::parseEgressMechanism(options.egress);
    model::validateProjectOptions(project);
    if (!options.output.empty()) ui::parseOutputFormat(options.output, {"yaml", "json", "name"});
}

// Auto picks the platform's own mechanism; a forced one must be served, except when only
// printing (--dry-run=client renders for any cluster).
model::EgressMechanism chooseMechanism(app::Context& context, const ProjectCreateOptions& options) {
    auto& discovery = context.discovery();
    auto wanted = options.project.egress;
    if (wanted == model::EgressMechanism::Auto) {
        if (discovery.isServed("k8s.ovn.org")) return model::EgressMechanism::EgressFirewall;
        if (discovery.isServed("cilium.io")) return model::EgressMechanism::Cilium;
        return model::EgressMechanism::NetworkPolicy;
    }
    if (options.dryRun == "client" || options.project.allowHosts.empty()) return wanted;
    auto check = [&](const char* group, const char* kind) {
        if (!discovery.isServed(group))
            throw Error(
                fmt::format("--egress {}: this cluster does not serve {} ({}); use "
                            "--egress auto or --egress networkpolicy",
                            model::egressMechanismName(wanted), group, kind));
    };
    if (wanted == model::EgressMechanism::EgressFirewall) check("k8s.ovn.org", "EgressFirewall");
    if (wanted == model::EgressMechanism::Cilium) check("cilium.io", "CiliumNetworkPolicy");
    return wanted;
}

// Refuses a namespace rossoctl did not make (kube-system under default-deny would be a
// disaster) and one being deleted, before anything is written.
std::optional<json> checkExistingNamespace(app::Context& context,
                                           const ProjectCreateOptions& options) {
    const auto& name = options.project.name;
    std::optional<json> existing;
    try {
        existing = context.client().getIfExists(resources::namespaces(), "", name);
    } catch (...) {
        rethrowPartialWrite("get", resources::namespaces(), "", name, {}, finishHint(name));
    }
    if (!existing) return existing;
    if (existing->value("status", json::object()).value("phase", "") == "Terminating")
        throw Error(
            fmt::format("project \"{}\" is being deleted; wait for \"rossoctl project delete "
                        "{} --yes\" to finish, then run this again",
                        name, name));
    if (!isSandboxProject(*existing) && !options.adopt)
        throw Error(
            fmt::format("namespace \"{}\" already exists and is not a rossoctl project (no "
                        "label {}=true); pick another name, or pass --adopt to make it one",
                        name, model::kSandboxProjectLabel));
    return existing;
}

// How long one write rides out an API server that is away (a restart, a failover).
constexpr std::chrono::seconds kOutageBudget{60};

bool isEgressPolicy(const kube::ResourceRef& ref) {
    return ref.resource == "networkpolicies" || ref.resource == "egressfirewalls" ||
           ref.resource == "ciliumnetworkpolicies";
}

// A re-run writes exactly this run's --allow-host/--allow-cidr: an earlier run's are not kept.
// When that changed the policy, say so where it cannot be missed.
void warnEgressChanged(app::Context& context, const ProjectCreateOptions& options) {
    std::string allowed;
    for (const auto& host : options.hosts) allowed += (allowed.empty() ? "" : ", ") + host;
    for (const auto& cidr : options.cidrs) allowed += (allowed.empty() ? "" : ", ") + cidr;
    context.err() << fmt::format(
        "Warning: the egress policy of project {} changed: egress is now allowed only to {}{}. "
        "Flags of earlier runs are not kept; repeat every --allow-host/--allow-cidr still "
        "wanted.\n",
        options.project.name, allowed.empty() ? "nothing" : allowed,
        options.noDns ? "" : " (and DNS)");
}

WriteResult writeObject(app::Context& context, const model::PlannedObject& planned, bool dryRun,
                        const std::vector<std::string>& done) {
    auto& client = context.client();
    const auto& metadata = planned.object["metadata"];
    const std::string name = metadata.value("name", "");
    const std::string ns = metadata.value("namespace", "");
    std::string verb = "get";
    WriteResult result;
    // Each step reads before it writes, so a step cut by an API outage is safe to repeat.
    auto attempt = [&] {
        verb = "get";
        if (planned.createOnly) {
            // A ProjectRequest is a one-shot request, not an object: ask only when missing.
            if (client.getIfExists(resources::projects(), "", name)) {
                result = {planned.object, "unchanged"};
                return;
            }
            verb = "create";
            result = {client.create(planned.ref, ns, planned.object, {.dryRun = dryRun}),
                      "created"};
            return;
        }
        auto before = client.getIfExists(planned.ref, ns, name);
        verb = "patch";
        // force: these objects are rossoctl's; the command line is what they must say.
        json after = client.apply(planned.ref, ns, planned.object,
                                  {.dryRun = dryRun, .fieldManager = "rossoctl", .force = true});
        std::string outcome = "created";
        if (before) {
            auto oldVersion = (*before)["metadata"].value("resourceVersion", "");
            outcome = oldVersion == after["metadata"].value("resourceVersion", "") ? "unchanged"
                                                                                   : "configured";
        }
        result = {after, outcome};
    };
    try {
        kube::rideOutOutage(context.clock(), kOutageBudget, context.cancelFlag(), attempt);
        return result;
    } catch (...) {
        rethrowPartialWrite(verb, planned.ref, ns, name, done, finishHint(ns.empty() ? name : ns));
    }
}

// Objects an earlier run wrote that this one no longer wants (a host removed, --no-dns now).
std::vector<std::string> pruneStale(app::Context& context, const model::ProjectPlan& plan,
                                    const std::string& ns, std::vector<std::string>& done) {
    std::set<std::string> wanted;
    for (const auto& object : plan.objects) wanted.insert(object.displayName());
    std::vector<std::string> pruned;
    for (const auto& candidate : model::optionalProjectObjects(ns)) {
        if (wanted.count(candidate.displayName())) continue;
        if (!candidate.ref.group.empty() && candidate.ref.group != "networking.k8s.io" &&
            !context.discovery().isServed(candidate.ref.group))
            continue;
        const std::string name = candidate.object["metadata"]["name"];
        std::string verb = "get";
        try {
            auto existing = context.client().getIfExists(candidate.ref, ns, name);
            if (!existing) continue;
            auto labels = (*existing)["metadata"].value("labels", json::object());
            if (labels.value(model::kManagedByLabel, "") != model::kManagedByValue) continue;
            verb = "delete";
            kube::DeleteOptions deleteOptions;
            deleteOptions.preconditionResourceVersion =
                (*existing)["metadata"].value("resourceVersion", "");
            context.client().remove(candidate.ref, ns, name, deleteOptions);
        } catch (const kube::ApiError& error) {
            if (error.isNotFound() || error.isConflict()) continue;
            rethrowPartialWrite(verb, candidate.ref, ns, name, done, finishHint(ns));
        } catch (...) {
            rethrowPartialWrite(verb, candidate.ref, ns, name, done, finishHint(ns));
        }
        pruned.push_back(candidate.displayName());
        done.push_back(candidate.displayName() + " deleted");
    }
    return pruned;
}

// As kubectl prints objects: the apply bookkeeping is noise to a reader.
json withoutManagedFields(json object) {
    if (object.contains("metadata")) object["metadata"].erase("managedFields");
    return object;
}

// Until the quota controller has counted usage, quota admission refuses every pod; wait a
// little so the next command (agents import) does not hit that.
void waitForQuotaStatus(app::Context& context, const std::string& ns) {
    kube::WaitOptions waitOptions;
    waitOptions.timeout = std::chrono::seconds(15);
    waitOptions.cancel = context.cancelFlag();
    auto result = kube::waitForObject(
        context.client(), context.clock(), resources::resourceQuotas(), ns, model::kQuotaName,
        waitOptions, [](const std::optional<json>& quota) {
            return !quota || quota->value("status", json::object()).contains("hard");
        });
    if (result.outcome == kube::WaitOutcome::TimedOut)
        context.err() << "Warning: the quota controller has not counted usage in " << ns
                      << " yet; new pods are refused until it has\n";
}

void printObjects(app::Context& context, const std::string& output, const json& objects) {
    auto format = ui::parseOutputFormat(output, {"yaml", "json", "name"});
    if (format != ui::OutputFormat::Name) {  // one List, as every multi-object output
        json items = json::array();
        for (const auto& object : objects) items.push_back(withoutManagedFields(object));
        return format == ui::OutputFormat::Json ? ui::printJson(context.out(), ui::asList(items))
                                                : ui::printYaml(context.out(), ui::asList(items));
    }
    for (const auto& object : objects) {
        std::string kind = object.value("kind", "");
        std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
        context.out() << kind << '/' << object["metadata"].value("name", "") << '\n';
    }
}

void printSummary(app::Context& context, const model::ProjectOptions& project,
                  const model::ProjectPlan& plan, const std::string& dryRun) {
    auto& out = context.out();
    if (!dryRun.empty()) {
        out << fmt::format("Dry run ({}): nothing was written.\n", dryRun);
        return;
    }
    out << fmt::format("\nProject {} is ready.\n", project.name);
    out << fmt::format(
        "  Quota:          cpu {}, memory {}, pods {}, storage {}, {} volume claims\n", project.cpu,
        project.memory, project.pods, project.storage, project.persistentVolumeClaims);
    out << fmt::format("  Per container:  default {} cpu / {} memory, at most {} cpu / {}\n",
                       project.containerCpu, project.containerMemory, project.maxContainerCpu,
                       project.maxContainerMemory);
    out << fmt::format("  Pod security:   {}; default sandbox lifetime {}\n", project.podSecurity,
                       project.defaultLifetime);
    if (plan.egressSummary.empty()) {
        out << "  Egress:         none (every connection out of a pod is denied)\n";
    } else {
        out << fmt::format("  Egress allowed ({}), everything else denied:\n",
                           model::egressMechanismName(plan.mechanism));
        for (const auto& line : plan.egressSummary) out << "    " << line << '\n';
    }
    out << fmt::format(
        "Next: rossoctl agents import --deployment-type sandbox from-image --name my-agent "
        "--containerImage IMG -n {}\n",
        project.name);
}

// The live proof that default-deny is enforced; exit 3 when it is not (or cannot be shown).
int proveEnforcement(app::Context& context, const ProjectCreateOptions& options) {
    if (options.noCheck || !options.dryRun.empty()) return 0;
    app::EnforcementCheckOptions check;
    check.image = options.checkImage;
    check.cancel = context.cancelFlag();
    const auto result = app::checkDefaultDenyEnforced(context.client(), context.clock(),
                                                      options.project.name, check);
    const double seconds = static_cast<double>(result.took.count()) / 1000;
    if (result.verdict == app::Enforcement::Enforced) {
        context.err() << fmt::format(
            "Enforcement:    default-deny holds (checked live in {:.1f}s: {})\n", seconds,
            result.evidence.back());
        return 0;
    }
    const bool unproven = result.verdict == app::Enforcement::Unproven;
    context.err() << fmt::format(
        "error: {} in project {}: {}\n"
        "The policies were written{}. {}Run \"rossoctl project create {} --no-check\" to skip this "
        "check.\n",
        unproven ? "could not prove that NetworkPolicy is enforced"
                 : "NetworkPolicy is NOT ENFORCED: pods can reach what default-deny forbids",
        options.project.name, fmt::join(result.evidence, "; "),
        unproven ? "" : " but the cluster's network plugin ignores them",
        unproven ? "" : "Use a network plugin that enforces NetworkPolicy (egress too). ",
        options.project.name);
    return kExitBoundaryNotProven;
}

int runProjectCreate(app::Context& context, ProjectCreateOptions& options) {
    options.dryRun = dryRunText(parseDryRun(options.dryRun, context.err()));
    validate(options);
    auto& project = options.project;
    // complete: what the cluster serves decides the namespace kind and the egress mechanism
    project.openshift = context.discovery().isServed("project.openshift.io");
    auto mechanism = chooseMechanism(context, options);
    auto plan = model::planProject(project, mechanism, context.resolver());
    for (const auto& warning : plan.warnings) context.err() << "Warning: " << warning << '\n';

    json printed = json::array();
    if (options.dryRun == "client") {
        for (const auto& object : plan.objects) printed.push_back(object.object);
        if (!options.output.empty()) return printObjects(context, options.output, printed), 0;
        for (const auto& object : plan.objects)
            context.out() << object.displayName() << " (dry run)\n";
        printSummary(context, project, plan, options.dryRun);
        return 0;
    }

    bool serverDryRun = options.dryRun == "server";
    auto existing = checkExistingNamespace(context, options);
    std::vector<std::string> done;
    std::vector<std::string> lines;
    bool egressChanged = false;
    for (const auto& planned : plan.objects) {
        // A namespace that does not exist yet cannot hold dry-run objects: stop after it.
        if (serverDryRun && !existing && planned.ref.namespaced) {
            context.err() << fmt::format(
                "Note: namespace \"{}\" does not exist yet, so the server checked only the "
                "namespace; the other {} objects were checked on the client only\n",
                project.name, plan.objects.size() - printed.size());
            break;
        }
        auto result = writeObject(context, planned, serverDryRun, done);
        egressChanged |= existing && !serverDryRun && isEgressPolicy(planned.ref) &&
                         result.outcome != "unchanged";
        printed.push_back(result.object);
        done.push_back(planned.displayName() + " " + result.outcome);
        lines.push_back(planned.displayName() + " " + result.outcome +
                        (serverDryRun ? " (server dry run)" : ""));
    }
    if (!serverDryRun) {
        for (const auto& name : pruneStale(context, plan, project.name, done)) {
            lines.push_back(name + " deleted (no longer wanted)");
            egressChanged |= existing && (name.find("networkpolic") != std::string::npos ||
                                          name.find("egressfirewall") != std::string::npos);
        }
        if (egressChanged) warnEgressChanged(context, options);
        waitForQuotaStatus(context, project.name);
    }
    if (!options.output.empty()) {
        printObjects(context, options.output, printed);
        return proveEnforcement(context, options);
    }
    for (const auto& line : lines) context.out() << line << '\n';
    printSummary(context, project, plan, options.dryRun);
    return proveEnforcement(context, options);
}

}  // namespace

void registerProjectCreate(CLI::App& project, CommandHost& host) {
    auto options = std::make_shared<ProjectCreateOptions>();
    auto& p = options->project;
    auto* command = project.add_subcommand(
        "create",
        "Create (or converge) a sandbox project: namespace, quota, limits, egress policy");
    command->add_option("name", p.name, "Project (namespace) name")->required();
    command->add_option("--cpu", p.cpu, "Quota: cpu requests and limits of all pods")
        ->capture_default_str();
    command->add_option("--memory", p.memory, "Quota: memory requests and limits")
        ->capture_default_str();
    command->add_option("--pods", p.pods, "Quota: number of pods")->capture_default_str();
    command->add_option("--storage", p.storage, "Quota: requested storage of all claims")
        ->capture_default_str();
    command->add_option("--pvcs", p.persistentVolumeClaims, "Quota: number of volume claims")
        ->capture_default_str();
    command
        ->add_option("--container-cpu", p.containerCpu,
                     "Default cpu request and limit of a container")
        ->capture_default_str();
    command
        ->add_option("--container-memory", p.containerMemory,
                     "Default memory request and limit of a container")
        ->capture_default_str();
    command->add_option("--max-container-cpu", p.maxContainerCpu,
                        "Largest cpu limit of a container (default: 2, at most --cpu)");
    command->add_option("--max-container-memory", p.maxContainerMemory,
                        "Largest memory limit of a container (default: 4Gi, at most --memory)");
    command
        ->add_option("--default-lifetime", p.defaultLifetime,
                     "Lifetime of sandboxes that do not set --lifetime")
        ->capture_default_str();
    command
        ->add_option("--allow-host", options->hosts,
                     "Allow egress to host name H (TCP to PORT, or every port); repeatable")
        ->type_name("H[:PORT]");
    command
        ->add_option("--allow-cidr", options->cidrs,
                     "Allow egress to an IPv4/IPv6 range (every port); repeatable")
        ->type_name("CIDR");
    command->add_flag("--no-dns", options->noDns, "Do not allow DNS to kube-system/kube-dns");
    command
        ->add_option("--pod-security", p.podSecurity,
                     "Pod Security level: restricted|baseline|privileged")
        ->capture_default_str();
    command
        ->add_option("--egress", options->egress,
                     "Named-host mechanism: auto|networkpolicy|egressfirewall|cilium")
        ->capture_default_str();
    command->add_flag("--force", options->force,
                      "Allow --allow-cidr 0.0.0.0/0 or ::/0 (egress to every address)");
    command->add_flag("--adopt", options->adopt,
                      "Turn an existing namespace rossoctl did not create into a project");
    addDryRunFlag(command, options->dryRun,
                  "client: print the objects, write nothing; server: the apiserver checks "
                  "them (dryRun=All), stores nothing");
    command->add_option("-o,--output", options->output, "Print the objects: yaml|json|name");
    command->add_flag("--no-check", options->noCheck,
                      "Skip the live check that the default-deny policy is enforced");
    command
        ->add_option("--check-image", options->checkImage,
                     "Image of the check's two short-lived pods (needs sh and python3 or nc)")
        ->capture_default_str();
    command->footer(
        "Examples:\n"
        "  rossoctl project create team1\n"
        "  rossoctl project create team1 --cpu 8 --memory 16Gi --allow-host pypi.org:443 \\\n"
        "      --allow-host files.pythonhosted.org:443 --allow-cidr 10.20.0.0/16\n"
        "  rossoctl project create team1 --egress cilium --dry-run=client -o yaml\n"
        "\n"
        "Objects are written with server-side apply (field manager rossoctl, taking over fields\n"
        "others changed): run it again to converge or to finish a run that failed.\n"
        "After writing, two short-lived pods prove the default-deny is enforced: a client reaches\n"
        "a server while a temporary policy allows it, and cannot once it is gone (a network\n"
        "plugin that ignores NetworkPolicy accepts the objects and enforces nothing).\n"
        "Exit codes: 0 done; 1 API error or refused namespace; 2 invalid input (nothing sent);\n"
        "3 the policies were written but are not enforced, or that could not be shown (--no-check\n"
        "skips the check).");
    onRun(command, host, options, &runProjectCreate);
}

}  // namespace rossoctl::commands
