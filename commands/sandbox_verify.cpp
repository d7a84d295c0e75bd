// rossoctl sandbox verify: prove the four isolation boundaries of a sandbox, with evidence.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/parallel.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/verify/report.hpp"

namespace rossoctl::commands {
namespace {

// "unproven: egress denied" for a report whose required checks did not all pass; else none.
std::optional<std::string> notPassed(const verify::SandboxReport& report) {
    std::string failed, unproven;
    for (const auto& check : report.checks) {
        if (!check.required || check.verdict() == verify::Verdict::Pass) continue;
        auto& into = check.verdict() == verify::Verdict::Fail ? failed : unproven;
        into += (into.empty() ? "" : ", ") + verify::checkTitle(check.kind);
    }
    std::string said;
    if (!failed.empty()) said = "fail: " + failed;
    if (!unproven.empty()) said += (said.empty() ? "" : "; ") + ("unproven: " + unproven);
    if (said.empty()) return std::nullopt;
    return said + " (the report on stdout has the evidence)";
}

// The one line an interrupted verify ends with: which reports are partial, which sandboxes
// were not verified at all.
std::string interruptedLine(const std::vector<verify::SandboxReport>& reports) {
    std::vector<std::string> partial, unverified;
    for (const auto& report : reports)
        (report.error.empty() ? partial : unverified)
            .push_back("sandbox/" + ui::escapeForTerminal(report.name));
    std::string line = "sandbox verify was interrupted (Ctrl-C)";
    if (!partial.empty())
        line += fmt::format("; the report of {} is partial (what it cut short is unproven)",
                            fmt::join(partial, ", "));
    if (!unverified.empty()) line += fmt::format("; {} not verified", fmt::join(unverified, ", "));
    return line;
}

using nlohmann::json;

// Mostly waiting (probe time-outs, pod restarts): many at once; each uses up to four
// connections of its own.
constexpr size_t kMaxParallelSandboxes = 12;

struct VerifyCommandOptions {
    std::vector<std::string> names;
    bool all = false;
    std::string egressTarget = "https://example.com";
    bool noRestart = false;
    std::string trustedProbe;  // image of the ephemeral container the egress probe runs in
    std::string timeout = "2m";
    std::string requireRuntimeClass;
    std::string junitFile;  // written beside -o, so one run gives every format
    std::string sarifFile;
    OutputFlags output;
};

// Checked before any request (its directory exists and may be written), so a report that
// cannot be written is said before the pod restarts; written once the run is done.
void checkReportFile(const std::string& path, const char* flag) {
    if (path.empty()) return;
    const auto parent = std::filesystem::path(path).parent_path();
    const std::string directory = parent.empty() ? "." : parent.string();
    if (!std::filesystem::is_directory(directory) || ::access(directory.c_str(), W_OK) != 0 ||
        std::filesystem::is_directory(path))
        throw UsageError(fmt::format("{} {:?}: cannot write that file", flag, path));
}

void writeReportFile(const std::string& path, const char* flag,
                     const std::function<void(std::ostream&)>& write) {
    if (path.empty()) return;
    std::ofstream file(path, std::ios::trunc);
    write(file);
    if (!file.flush())
        throw Error(fmt::format("{} {:?}: the report could not be written", flag, path));
}

// A server's string member, "" for anything else (a hostile list never throws here).
std::string stringField(const json& object, const char* key) {
    const auto it = object.is_object() ? object.find(key) : object.end();
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> sandboxNames(app::Context& context, const kube::ResourceRef& ref,
                                      const std::string& ns, const VerifyCommandOptions& options,
                                      std::vector<std::string>& suspended,
                                      std::set<std::string>& listed) {
    if (!options.all) return options.names;
    // Every one, a warm pool's spares too: a spare is someone's sandbox once claimed, and an
    // owner reference to a pool is no reason to leave a sandbox out of the gate (attack 55 P1).
    // A suspended one has no pod to verify, which is a normal state, not an error: it is left
    // out with a note (walk 6 MINOR 6), and the run is not proven, since any project user may
    // resume it as it is (attack 63 S1).
    std::vector<std::string> names;
    for (const auto& item : context.client().list(ref, ns).value("items", json::array())) {
        const json metadata = item.is_object() ? item.value("metadata", json()) : json();
        const std::string name = stringField(metadata, "name");
        listed.insert(stringField(metadata, "uid"));
        (app::suspendedInSpec(item) ? suspended : names).push_back(name);
    }
    for (const auto& name : suspended)
        context.err() << fmt::format(
            "note: sandbox/{} is suspended, so it has no pod to verify: skipped, and the run is "
            "unproven (exit 3) for it (verify it once \"rossoctl sandbox resume {} -n {}\" has "
            "run)\n",
            ui::escapeForTerminal(name), ui::escapeForTerminal(name), ns);
    if (names.empty() && !suspended.empty())
        throw Error(
            fmt::format("every sandbox in namespace {} is suspended: nothing to verify", ns));
    if (names.empty())
        throw Error(
            fmt::format("no sandboxes in namespace {}: nothing to verify; run \"rossoctl "
                        "sandbox list -n {}\"",
                        ns, ns));
    return names;
}

int runVerify(app::Context& context, VerifyCommandOptions& options) {
    // validate
    options.names = objectNames(options.names, {sandboxType()}, "sandbox");
    for (const auto& name : options.names) model::validateDnsSubdomain(name, "sandbox name");
    if (options.names.empty() && !options.all)
        throw UsageError("name the sandboxes to verify, or use --all");
    if (!options.names.empty() && options.all)
        throw UsageError("give sandbox names or --all, not both");
    const auto target = verify::parseEgressTarget(options.egressTarget);
    if (!target)
        throw UsageError(fmt::format(
            "--egress-target {:?} is not an http:// or https:// URL (e.g. https://example.com)",
            options.egressTarget));
    const std::string format = options.output.output.empty() ? "table" : options.output.output;
    static const std::vector<std::string> kFormats = {"table", "json", "junit", "sarif"};
    if (std::find(kFormats.begin(), kFormats.end(), format) == kFormats.end()) {
        const std::string nearest = nearestWord(format, kFormats);
        throw UsageError(
            fmt::format("--output {:?} is not one of table, json, junit, sarif{}", format,
                        nearest.empty() ? "" : fmt::format(" (did you mean {}?)", nearest)));
    }
    verify::VerifyOptions verifyOptions;
    verifyOptions.egressTarget = *target;
    verifyOptions.restart = !options.noRestart;
    if (options.trustedProbe.find_first_of(" \t\n") != std::string::npos)
        throw UsageError(
            fmt::format("--trusted-probe {:?} is not an image reference (e.g. busybox:1.36)",
                        options.trustedProbe));
    verifyOptions.trustedProbeImage = options.trustedProbe;
    if (!options.requireRuntimeClass.empty())
        model::validateDnsSubdomain(options.requireRuntimeClass, "--require-runtime-class");
    verifyOptions.requireRuntimeClass = options.requireRuntimeClass;
    checkReportFile(options.junitFile, "--junit");
    checkReportFile(options.sarifFile, "--sarif");
    verifyOptions.timeout = app::parseDuration(options.timeout, "--timeout");
    verifyOptions.cancel = context.cancelFlag();
    verifyOptions.control = [&resolver = context.resolver()](const verify::EgressTarget& to,
                                                             std::chrono::milliseconds timeout) {
        return verify::connectFromHere(resolver, to, timeout);
    };

    // complete
    const std::string ns = context.namespaceName();
    const kube::ResourceRef ref = context.discovery().sandboxes();
    std::vector<std::string> suspended;
    std::set<std::string> listed;  // the uids --all found
    const auto names = sandboxNames(context, ref, ns, options, suspended, listed);

    // run: a few sandboxes at a time; each check makes its own connections.
    std::mutex mutex;  // guards the streams and newClient
    verify::ClientFactory newClient = [&] {
        std::lock_guard lock(mutex);
        return context.newClient();
    };
    std::vector<verify::SandboxReport> reports(names.size());
    bool firstTable = true;
    app::forEachInParallel(names.size(), kMaxParallelSandboxes, [&](size_t index, size_t) {
        const std::string& name = names[index];
        verify::VerifyOptions mine = verifyOptions;
        mine.onStep = [&](const std::string& text) {
            std::lock_guard lock(mutex);
            if (context.streams().errIsTty)
                context.err() << "sandbox/" << ui::escapeForTerminal(name) << ": "
                              << ui::escapeForTerminal(text) << '\n';
        };
        verify::SandboxReport& report = reports[index];
        try {
            auto client = newClient();
            report =
                verify::verifySandbox(*client, newClient, context.clock(), ref, ns, name, mine);
        } catch (const kube::ApiError& error) {
            report.error = fmt::format("sandbox/{}: {}", name, error.what());
        } catch (const std::exception& error) {
            report.error = error.what();
        }
        report.name = name;
        report.namespaceName = ns;
        report.interrupted = context.cancelled();
        std::lock_guard lock(mutex);
        if (!report.error.empty()) {
            // An error Ctrl-C caused ("cancelled") is said once, by the line at the end.
            if (!report.interrupted)
                context.err() << "error: " << ui::escapeForTerminal(report.error) << '\n';
        } else if (format == "table") {
            if (!firstTable) context.out() << '\n';
            firstTable = false;
            verify::printReportTable(context.out(), report, options.output.noHeaders,
                                     context.color());
            context.out() << std::flush;
        } else if (auto why = notPassed(report)) {
            // A machine format on stdout: the reason for exit 3 still reaches a CI log.
            context.err() << "sandbox/" << ui::escapeForTerminal(name) << ": " << *why << '\n';
        }
        // As `sandbox restart` says it: files are never lost without a word.
        for (const auto& note : report.notes)
            context.err() << "note: sandbox/" << ui::escapeForTerminal(name) << ": "
                          << ui::escapeForTerminal(note) << '\n';
        if (!report.runError.empty() && !report.interrupted)
            context.err() << fmt::format(
                "error: sandbox/{}: the run broke ({}); what it left unproven was not "
                "tested, run verify again\n",
                ui::escapeForTerminal(name), ui::escapeForTerminal(report.runError));
    });

    if (format == "json") {  // one sandbox named: its report; else a List, as kubectl prints many
        if (names.size() == 1 && !options.all) {
            ui::printJson(context.out(), verify::reportJson(reports.front()));
        } else {
            json items = json::array();
            for (const auto& report : reports) items.push_back(verify::reportJson(report));
            ui::printJson(context.out(), ui::asList(items));
        }
    } else if (format == "junit") {
        verify::writeJunit(context.out(), reports);
    } else if (format == "sarif") {
        ui::printJson(context.out(), verify::reportSarif(reports));
    }
    writeReportFile(options.junitFile, "--junit",
                    [&](std::ostream& out) { verify::writeJunit(out, reports); });
    writeReportFile(options.sarifFile, "--sarif",
                    [&](std::ostream& out) { ui::printJson(out, verify::reportSarif(reports)); });
    if (context.cancelled()) {
        context.err() << "error: " << interruptedLine(reports) << '\n';
        return kExitCancelled;
    }
    // --all promises every sandbox: one made while verify ran was not verified (attack 64 A1).
    std::size_t unverified = suspended.size();
    json now;
    if (options.all) try {
            now = context.client().list(ref, ns);
        } catch (const kube::ApiError& error) {
            ++unverified;
            context.err() << "note: the sandboxes could not be listed again ("
                          << ui::escapeForTerminal(error.what())
                          << "): one made while verify ran is not ruled out, and the run is "
                             "unproven (exit 3)\n";
        }
    if (now.is_object() && now.contains("items") && now["items"].is_array())
        for (const auto& item : now["items"]) {
            const json metadata = item.is_object() ? item.value("metadata", json()) : json();
            if (listed.count(stringField(metadata, "uid"))) continue;
            ++unverified;
            const std::string name = ui::escapeForTerminal(stringField(metadata, "name"));
            context.err() << fmt::format(
                "note: sandbox/{} was made while verify ran: not verified, and the run is "
                "unproven (exit 3) for it (verify it: \"rossoctl sandbox verify {} -n {}\")\n",
                name, name, ns);
        }
    return verify::exitCodeFor(reports, unverified);
}

}  // namespace

void registerSandboxVerify(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<VerifyCommandOptions>();
    auto* command = sandbox.add_subcommand(
        "verify",
        "Prove a sandbox's isolation: no token, no egress, limits, nothing survives, no way to the "
        "host, kernel isolation, image provenance");
    command->add_option("sandboxes", options->names, "Sandbox names");
    command->add_flag("--all", options->all, "Verify every sandbox in the namespace");
    command
        ->add_option("--egress-target", options->egressTarget, "A URL the sandbox must not reach")
        ->capture_default_str();
    command->add_flag("--no-restart", options->noRestart,
                      "Do not delete the pod; \"nothing survives\" is then reported unproven");
    command
        ->add_option("--trusted-probe", options->trustedProbe,
                     "Run the egress probe in an ephemeral container of IMAGE, not with the "
                     "pod's own tools")
        ->type_name("IMAGE");
    command
        ->add_option(
            "--timeout", options->timeout,
            "How long to wait for the sandbox's pod: one being replaced, and verify's own restart")
        ->capture_default_str();
    command
        ->add_option("--require-runtime-class", options->requireRuntimeClass,
                     "Kernel isolation fails unless the pod runs with this RuntimeClass on a "
                     "kernel of its own (the project's rossoctl.dev/runtime-class otherwise)")
        ->type_name("NAME");
    command->add_option("--junit", options->junitFile, "Also write the JUnit report to FILE")
        ->type_name("FILE");
    command->add_option("--sarif", options->sarifFile, "Also write the SARIF report to FILE")
        ->type_name("FILE");
    // Not addOutputFlags: a report is no API object, so no template, --sort-by or managedFields.
    command->add_option("-o,--output", options->output.output,
                        "Output format: table|json|junit|sarif (default table)");
    command->add_flag("--no-headers", options->output.noHeaders, "Omit table headers");
    command->footer(
        "Checks (each has a static part read from the API and a live part run in the pod;\n"
        "a check passes only when both do, and a probe that cannot run makes it unproven):\n"
        "  no service-account token  automountServiceAccountToken false, no projected token,\n"
        "                            no legacy token Secret, no credential by shape in what\n"
        "                            the pod reads; opening the token file fails\n"
        "  egress denied             the union of the policies selecting the pod opens nothing\n"
        "                            beyond the project's DNS and allowed hosts/CIDRs; a\n"
        "                            connection to --egress-target fails at connect level while\n"
        "                            this machine reaches it (a dead target is unproven)\n"
        "                            With --trusted-probe IMAGE the probe runs in an ephemeral\n"
        "                            container of IMAGE in the pod's network namespace (needs\n"
        "                            patch on pods/ephemeralcontainers), so the agent cannot\n"
        "                            replace the tools; evidence says where each probe ran.\n"
        "                            Without it a denial is unproven: the agent shares the\n"
        "                            pod's processes and user and could write the answer\n"
        "  limits enforced           cpu and memory limits above zero in every container, a\n"
        "                            deadline, a ResourceQuota; each cgroup's limits match\n"
        "  nothing survives          no volume that outlives the pod; canaries in every writable\n"
        "                            mount and the root filesystem are gone after the pod is\n"
        "                            deleted and replaced (DELETES THE POD; --no-restart skips)\n"
        "  no way to the host        no container (init and ephemeral too) privileged, in a\n"
        "                            host namespace, with host ports, added capabilities,\n"
        "                            privilege escalation, root, no seccomp, AppArmor unconfined,\n"
        "                            unmasked /proc, unsafe sysctls or SELinux off; /proc/self\n"
        "                            and /proc/1 status (capabilities, NoNewPrivs, seccomp, uid);\n"
        "                            with --trusted-probe, whether PID 1 and the network are the\n"
        "                            node's\n"
        "  kernel isolation          runtimeClassName and its handler; the kernel release and\n"
        "                            boot ID the pod sees against the node's (--trusted-probe\n"
        "                            reads them where the agent cannot forge them). Judged when\n"
        "                            the project (project create --runtime-class) or\n"
        "                            --require-runtime-class asks for a runtime, or the pod's\n"
        "                            RuntimeClass promises one; else reported \"not required\"\n"
        "  image provenance          every image by digest, from a registry the project allows\n"
        "                            (project create --allow-registry); the digest the kubelet\n"
        "                            reports it ran. Judged when the project lists registries\n"
        "-o json prints one named sandbox's report; several sandboxes, or --all, print a List\n"
        "of reports ({\"kind\":\"List\",\"items\":[...]}, as kubectl prints many objects).\n"
        "A check's \"result\" is pass, fail, unproven, or notRequired for one that did not pass\n"
        "but nothing asked for (what was measured is in \"measured\"), so\n"
        "jq '.checks[] | select(.result==\"fail\")' finds what fails the gate; JUnit marks\n"
        "a notRequired check skipped, SARIF a note with the same \"result\" property.\n"
        "--all verifies every sandbox of the namespace, a warm pool's spares too (one is\n"
        "someone's sandbox once claimed); a suspended one has no pod and is skipped with a "
        "note,\nand the run is then unproven (exit 3): anyone who may resume it runs it as it "
        "is; so is\none made while verify ran, found when it lists them again at the end.\n\n"
        "Examples:\n"
        "  rossoctl sandbox verify orders -n team1\n"
        "  rossoctl sandbox verify --all -n team1 --no-restart -o json\n"
        "  rossoctl sandbox verify orders --trusted-probe busybox:1.36\n"
        "  rossoctl sandbox verify orders --trusted-probe busybox:1.36 --require-runtime-class "
        "gvisor\n"
        "  rossoctl sandbox verify --all -o json --junit verify.xml --sarif verify.sarif\n"
        "  rossoctl sandbox verify orders --egress-target http://10.0.0.5:8080 -o junit > "
        "verify.xml\n\n"
        "Exit codes: 0 every boundary holds, 3 a boundary fails or is unproven,\n"
        "1 verification could not run or was cut short (sandbox not found, pod not Running,\n"
        "the API server unreachable), 2 invalid arguments, 130 interrupted.");
    onRun(command, host, options, &runVerify);
}

}  // namespace rossoctl::commands
