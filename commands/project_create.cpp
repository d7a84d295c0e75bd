// rossoctl project create: a namespace made safe for sandboxes (DESIGN.md section 3), written
// with server-side apply so running it again converges and finishes a half-done run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "conventions.hpp"
#include "project_create_notes.hpp"
#include "registry.hpp"
#include "rossoctl/app/enforcement_check.hpp"
#include "rossoctl/app/project_write.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/verify/image_provenance.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

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
    bool showManagedFields = false;
    bool noCheck = false;
    std::string checkImage = app::EnforcementCheckOptions{}.image;
    std::string timeout = "2m";
    std::chrono::milliseconds timeoutValue{0};
    std::vector<std::string> commandLine;  // as typed, for the advice to run it again
};

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
    if (options.checkImage.empty())
        throw UsageError("--check-image must name an image: every sandbox's egress gate runs it");
    project.gateImage = options.checkImage;
    project.egress = model::parseEgressMechanism(options.egress);
    model::validateProjectOptions(project);
    // The gate runs in every sandbox, so verify judges its image with the agent's.
    if (!project.allowRegistries.empty() &&
        !verify::registryAllowed(verify::parseImageReference(options.checkImage),
                                 project.allowRegistries))
        throw UsageError(fmt::format(
            "--check-image {} is not from a registry --allow-registry allows ({}): every "
            "sandbox's egress gate runs it, so give --check-image from one of them, pinned by "
            "digest",
            options.checkImage, fmt::join(project.allowRegistries, ", ")));
    if (!options.output.empty()) ui::parseOutputFormat(options.output, {"yaml", "json", "name"});
    options.timeoutValue = app::parseDuration(options.timeout, "--timeout");
    if (options.timeoutValue.count() <= 0)
        throw UsageError("--timeout must be more than 0: project create waits on the cluster");
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

void printObjects(app::Context& context, const ProjectCreateOptions& options, const json& objects) {
    auto format = ui::parseOutputFormat(options.output, {"yaml", "json", "name"});
    // One List, as every multi-object output; managedFields hidden unless asked for.
    if (ui::printJsonOrYaml(context.out(), format, ui::asList(objects), options.showManagedFields))
        return;
    for (const auto& object : objects) {
        std::string kind = object.value("kind", "");
        std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
        context.out() << ui::escapeForTerminal(kind) << '/'
                      << ui::escapeForTerminal(
                             object.value("metadata", json::object()).value("name", ""))
                      << '\n';
    }
}

// What an --allow-cidr of /0 (taken with --force) opens, for the warning and the summary.
struct EveryAddress {
    std::string cidrs;  // "0.0.0.0/0", "::/0" or "0.0.0.0/0 and ::/0"
    std::string reach;  // "every IPv4 address", "every IPv6 address" or "every address"
    std::string rest;   // the family still bounded: " for IPv4" (no IPv4 boundary), ...
};

std::optional<EveryAddress> everyAddressAllowed(const model::ProjectOptions& project) {
    const auto has = [&](const char* cidr) {
        return std::find(project.allowCidrs.begin(), project.allowCidrs.end(), cidr) !=
               project.allowCidrs.end();
    };
    const bool v4 = has("0.0.0.0/0"), v6 = has("::/0");
    if (v4 && v6) return EveryAddress{"0.0.0.0/0 and ::/0", "every address", ""};
    if (v4) return EveryAddress{"0.0.0.0/0", "every IPv4 address", "IPv4"};
    if (v6) return EveryAddress{"::/0", "every IPv6 address", "IPv6"};
    return std::nullopt;
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
    if (!project.runtimeClass.empty())
        out << fmt::format("  Runtime class:  {} for every pod (validatingadmissionpolicy/{}{})\n",
                           project.runtimeClass, model::kRuntimeClassPolicyPrefix, project.name);
    if (plan.egressSummary.empty()) {
        out << "  Egress:         none (every connection out of a pod is denied)\n";
    } else if (const auto open = everyAddressAllowed(project)) {
        out << fmt::format("  Egress allowed ({}) to {}{}:\n",
                           model::egressMechanismName(plan.mechanism), open->reach,
                           open->rest.empty() ? " (nothing is denied)"
                                              : fmt::format(" (no {} boundary)", open->rest));
        for (const auto& line : plan.egressSummary) out << "    " << line << '\n';
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
// The check runs in what is left of --timeout once the quota controller has counted usage:
// before that, quota admission refuses every pod, the check's too.
int proveEnforcement(app::Context& context, const ProjectCreateOptions& options,
                     const app::ProjectWriteResult& written,
                     std::chrono::steady_clock::time_point deadline) {
    if (options.noCheck || !options.dryRun.empty()) return 0;
    app::EnforcementResult result;
    if (!written.quotaCounted) {
        result.evidence.push_back(fmt::format(
            "the quota controller had not counted usage in {} within --timeout {}, and until it "
            "has quota admission refuses every pod, the check's too; run this again once it has "
            "(it converges), or raise --timeout",
            options.project.name, options.timeout));
    } else {
        app::EnforcementCheckOptions check;
        check.image = options.checkImage;
        check.runtimeClass = options.project.runtimeClass;  // the project's policy refuses others
        check.cancel = context.cancelFlag();
        check.cleanupClient = [&context] { return context.newUncancellableClient(); };
        check.interruptNote = context.interruptNote();
        check.startTimeout = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          deadline - context.clock().monotonic()),
                                      std::chrono::milliseconds(std::chrono::seconds(1)));
        result = app::checkDefaultDenyEnforced(context.client(), context.clock(),
                                               options.project.name, check);
    }
    const double seconds = static_cast<double>(result.took.count()) / 1000;
    // The evidence quotes the check pod's output and the server's errors.
    for (auto& line : result.evidence) line = ui::escapeErrorLine(line, context.utf8Terminal());
    if (result.verdict == app::Enforcement::Enforced) {
        context.err() << fmt::format(
            "Enforcement:    default-deny holds (checked live in {:.1f}s: {})\n", seconds,
            result.evidence.back());
        return 0;
    }
    const std::string left =
        result.leftBehind.empty()
            ? ""
            : fmt::format("; the check's {} could not be deleted: \"kubectl delete -n {} {}\"",
                          fmt::join(result.leftBehind, ", "), options.project.name,
                          fmt::join(result.leftBehind, " "));
    if (result.cancelled) {
        context.err() << fmt::format(
            "error: interrupted while checking that NetworkPolicy is enforced in project {}; the "
            "check's pods and policies were {}deleted{}\n"
            "The policies were written. Run \"{}\" again to check them (it converges).\n",
            options.project.name, result.leftBehind.empty() ? "" : "not all ", left,
            shellCommandLine(options.commandLine));
        return kExitCancelled;
    }
    if (!left.empty()) result.evidence.push_back(left.substr(2));
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
    if (const auto open = everyAddressAllowed(project))
        context.err() << fmt::format(
            "Warning: --allow-cidr {} allows egress to {}: project {} has no {}egress boundary\n",
            open->cidrs, open->reach, project.name, open->rest.empty() ? "" : open->rest + " ");
    // complete: what the cluster serves decides the namespace kind and the egress mechanism
    project.openshift = context.discovery().isServed("project.openshift.io");
    auto mechanism = chooseMechanism(context, options);
    auto plan = model::planProject(project, mechanism, context.resolver());
    for (const auto& warning : plan.warnings) context.err() << "Warning: " << warning << '\n';
    if (!options.noDns) warnClusterDnsRecursion(context, project.name);

    if (options.dryRun == "client") {
        json printed = json::array();
        for (const auto& object : plan.objects) printed.push_back(object.object);
        if (!options.output.empty()) return printObjects(context, options, printed), 0;
        for (const auto& object : plan.objects)
            context.out() << object.displayName() << " (dry run)\n";
        printSummary(context, project, plan, options.dryRun);
        return 0;
    }

    // run: the writes are app::writeProject's; what they found is worded here
    const auto deadline = context.clock().monotonic() + options.timeoutValue;
    const auto written = app::writeProject(context, plan, project.name,
                                           {.serverDryRun = options.dryRun == "server",
                                            .adopt = options.adopt,
                                            .quotaTimeout = options.timeoutValue});
    if (written.onlyNamespaceChecked)
        context.err() << fmt::format(
            "Note: namespace \"{}\" does not exist yet, so the server checked only the "
            "namespace; the other {} objects were checked on the client only\n",
            project.name, plan.objects.size() - written.objects.size());
    if (written.egressChanged)
        warnEgressChanged(context, project.name, options.hosts, options.cidrs, options.noDns);
    warnLimitsChanged(context, project.name, written.limitChanges);
    if (!written.quotaCounted)
        context.err() << fmt::format(
            "Warning: the quota controller has not counted usage in {} within --timeout {}; new "
            "pods are refused until it has\n",
            project.name, options.timeout);
    else if (written.quotaWaited >= std::chrono::seconds(1))
        context.err() << fmt::format(
            "Waited {:.1f}s for the quota controller to count usage in {} (new pods are refused "
            "until it has)\n",
            static_cast<double>(written.quotaWaited.count()) / 1000, project.name);
    if (!options.output.empty()) {
        printObjects(context, options, written.objects);
        return proveEnforcement(context, options, written, deadline);
    }
    for (const auto& line : written.lines) context.out() << line << '\n';
    printSummary(context, project, plan, options.dryRun);
    return proveEnforcement(context, options, written, deadline);
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
    command
        ->add_option("--allow-registry", p.allowRegistries,
                     "Images may come only from this registry (HOST or HOST/PATH); recorded on "
                     "the namespace, judged by sandbox verify; repeatable")
        ->type_name("REGISTRY");
    command
        ->add_option("--runtime-class", p.runtimeClass,
                     "Every pod of the project must run with this RuntimeClass (recorded on the "
                     "namespace, enforced by a ValidatingAdmissionPolicy; verify judges kernel "
                     "isolation against it)")
        ->type_name("NAME");
    command->add_flag("--force", options->force,
                      "Allow --allow-cidr 0.0.0.0/0 or ::/0 (egress to every address)");
    command->add_flag("--adopt", options->adopt,
                      "Turn an existing namespace rossoctl did not create into a project");
    addDryRunFlag(command, options->dryRun,
                  "client: print the objects, write nothing; server: the apiserver checks "
                  "them (dryRun=All), stores nothing");
    command->add_option("-o,--output", options->output, "Print the objects: yaml|json|name");
    addShowManagedFieldsFlag(command, options->showManagedFields);
    command->add_flag("--no-check", options->noCheck,
                      "Skip the live check that the default-deny policy is enforced");
    command
        ->add_option("--check-image", options->checkImage,
                     "Image of the check's two short-lived pods and of every sandbox's egress "
                     "gate, recorded on the namespace (needs sh and nc)")
        ->capture_default_str();
    command
        ->add_option("--timeout", options->timeout,
                     "Longest to wait for the cluster: the quota controller to count usage, then "
                     "the check's pods to run")
        ->capture_default_str();
    command->footer(
        "Examples:\n"
        "  rossoctl project create team1\n"
        "  rossoctl project create team1 --cpu 8 --memory 16Gi --allow-host pypi.org:443 \\\n"
        "      --allow-host files.pythonhosted.org:443 --allow-cidr 10.20.0.0/16\n"
        "  rossoctl project create team1 --egress cilium --dry-run=client -o yaml\n"
        "  rossoctl project create team1 --runtime-class gvisor --dry-run=client -o yaml\n"
        "\n"
        "Objects are written with server-side apply (field manager rossoctl, taking over fields\n"
        "others changed): run it again to converge or to finish a run that failed.\n"
        "After writing, two short-lived pods prove the default-deny is enforced: a client reaches\n"
        "a server while a temporary policy allows it, and cannot once it is gone (a network\n"
        "plugin that ignores NetworkPolicy accepts the objects and enforces nothing). Until the\n"
        "quota controller has counted usage in a new namespace every pod is refused, so both\n"
        "wait for it first, within --timeout, and say how long that took.\n"
        "Exit codes: 0 done; 1 API error or refused namespace; 2 invalid input (nothing sent);\n"
        "3 the policies were written but are not enforced, or that could not be shown (--no-check\n"
        "skips the check).");
    // The advice after Ctrl-C repeats the command line as typed: a re-run without its flags
    // would reset the quota and egress to the defaults.
    command->preparse_callback(
        [&host, options](size_t) { options->commandLine = host.arguments(); });
    onRun(command, host, options, &runProjectCreate);
}

}  // namespace rossoctl::commands
