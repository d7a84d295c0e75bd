// rossoctl sandbox cp SRC DST: files and directories between this machine and a sandbox's pod
// (SANDBOX:PATH on one side), with tar when the image has it and sh + cat when it does not.
#include <fmt/format.h>

#include <filesystem>

#include "caps.hpp"
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/copy.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "run_pod_target.hpp"

namespace rossoctl::commands {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CpOptions {
    std::string source;
    std::string destination;
    std::string container;
    bool force = false;
    std::string maxBytes = "1Gi";
    std::string maxFiles = "10000";
    std::string maxFileBytes = "512Mi";
    std::string timeout = "30m";
};

struct RemoteSpec {
    std::string namespaceName;  // "" unless given as NAMESPACE/SANDBOX:PATH
    std::string sandbox;
    std::string path;
    bool runPod = false;  // pod/NAME:PATH, a pod "sandbox run --keep" kept
};

// kubectl cp's reading: a path starting with '/' or '.', or without a ':', is local (a local
// path with a ':' can be written ./a:b). Otherwise what precedes the first ':' is SANDBOX,
// TYPE/SANDBOX when TYPE names the sandbox type (sandbox/orders, as -o name prints it), or
// else NAMESPACE/SANDBOX, as kubectl reads NAMESPACE/POD.
std::optional<RemoteSpec> parseRemote(const std::string& argument) {
    const auto colon = argument.find(':');
    if (colon == std::string::npos || colon == 0 || argument[0] == '/' || argument[0] == '.')
        return std::nullopt;
    RemoteSpec spec{"", argument.substr(0, colon), argument.substr(colon + 1)};
    const auto slash = spec.sandbox.find('/');
    if (slash == std::string::npos) return spec;
    if (spec.sandbox.find('/', slash + 1) != std::string::npos)
        throw UsageError(fmt::format(
            "\"{}\" must be [NAMESPACE/]SANDBOX:PATH or sandbox/SANDBOX:PATH (a local path "
            "with a ':' can be written ./{})",
            ui::escapeForTerminal(argument), ui::escapeForTerminal(argument)));
    if (namesPodType(spec.sandbox.substr(0, slash))) {
        spec.sandbox = spec.sandbox.substr(slash + 1);
        spec.runPod = true;
        return spec;
    }
    try {
        spec.sandbox = objectName(spec.sandbox, {sandboxType()}, "sandbox");
    } catch (const UsageError&) {
        spec.namespaceName = spec.sandbox.substr(0, slash);
        spec.sandbox = spec.sandbox.substr(slash + 1);
    }
    return spec;
}

// Out of the pod DST is the copy itself, as kubectl cp reads it: a directory's contents land in
// DST, so a second run finds DST taken (exit 2) instead of nesting a copy inside the first. A
// file becomes DST, or DST/NAME when DST is a directory here (cp's reading; kubectl fails).
fs::path localTarget(const std::string& destination, const std::string& remoteBase,
                     bool remoteIsDirectory) {
    if (!remoteIsDirectory && fs::is_directory(destination) && remoteBase != "." &&
        remoteBase != "/" && remoteBase != "..")
        return fs::path(destination) / remoteBase;
    return destination;
}

// Nothing is overwritten without --force: an existing file, or a directory with contents.
void checkLocalTarget(const fs::path& target, bool force, bool remoteIsDirectory) {
    std::error_code error;
    const auto parent = fs::absolute(target).parent_path();
    if (!fs::is_directory(parent))
        throw UsageError(fmt::format("{}: no such directory here; create it first",
                                     ui::escapeForTerminal(parent.string())));
    const auto status = fs::symlink_status(target, error);
    if (!fs::exists(status) || force) return;
    if (fs::is_directory(status) && fs::is_empty(target, error)) return;
    const std::string shown = ui::escapeForTerminal(target.string());
    if (remoteIsDirectory && fs::is_directory(status))
        throw UsageError(fmt::format(
            "{} already exists and is not empty; nothing was copied: a directory from the pod "
            "becomes {} itself (as kubectl cp reads it), so name a new directory, or add --force "
            "to write into it (files of the same name are replaced)",
            shown, shown));
    throw UsageError(fmt::format(
        "{} already exists{}; nothing was copied: add --force to write into it (files of the "
        "same name are replaced)",
        shown, fs::is_directory(status) ? " and is not empty" : ""));
}

void printResult(app::Context& context, const app::copy::CopyStats& stats) {
    if (!stats.usedTar)
        context.err() << "note: the image has no tar; copied file by file with sh and cat\n";
    for (const auto& why : stats.rejected)
        context.err() << "warning: refused: " << ui::escapeForTerminal(why) << '\n';
    context.err() << fmt::format("copied {} file{}, {} bytes\n", stats.files,
                                 stats.files == 1 ? "" : "s",
                                 app::copy::groupThousands(stats.bytes));
    if (stats.refused > 0)
        throw Error(fmt::format("{} entr{} refused (see the warnings); the rest was copied",
                                stats.refused, stats.refused == 1 ? "y was" : "ies were"));
}

// '-' for DST is stdout, for SRC stdin, as docker cp and tar read it (a local file named '-'
// can be written ./-).
constexpr const char* kStdio = "-";

// SANDBOX:FILE to stdout: the bytes as they are in a pipe or file, escaped on a terminal.
void copyToStdout(app::Context& context, const app::copy::PodTarget& podTarget,
                  const app::copy::RemoteInfo& info, const RemoteSpec& remote,
                  const app::ExtractLimits& limits) {
    const std::string shown = ui::escapeForTerminal(remote.sandbox + ":" + remote.path);
    if (info.type == app::copy::RemoteType::Missing)
        throw Error(fmt::format("{}: no such file or directory in the pod", shown));
    if (info.type == app::copy::RemoteType::Directory)
        throw Error(fmt::format(
            "{} is a directory; '-' (stdout) takes one file: name a local directory instead",
            shown));
    ui::UntrustedTextWriter out(context.out(), context.streams().outIsTty, context.utf8Terminal());
    const auto stats = app::copy::copyFileToSink(context.client(), podTarget, remote.path, limits,
                                                 [&](std::string_view bytes) { out.write(bytes); });
    out.finish();
    printResult(context, stats);
}

// stdin to SANDBOX:FILE (a directory there is refused: '-' has no name to give the file).
void copyFromStdin(app::Context& context, const app::copy::PodTarget& podTarget,
                   const app::copy::RemoteInfo& info, const RemoteSpec& remote, uint64_t maxBytes) {
    const std::string shown = ui::escapeForTerminal(remote.sandbox + ":" + remote.path);
    if (info.type == app::copy::RemoteType::Directory)
        throw Error(fmt::format(
            "{} is a directory in the pod; '-' (stdin) needs the file's name, e.g. {}/{}", shown,
            shown, "input.txt"));
    kube::ExecIo input;
    if (context.streams().inDescriptor >= 0) {
        input.stdinDescriptor = context.streams().inDescriptor;  // polled, as exec does
    } else {
        input.readStdin = [&context](char* buffer, size_t size) -> size_t {
            return static_cast<size_t>(
                context.in().rdbuf()->sgetn(buffer, static_cast<std::streamsize>(size)));
        };
    }
    app::copy::copySourceToPod(context.client(), podTarget, remote.path, std::move(input),
                               {maxBytes, context.cancelFlag()});
    context.err() << "copied stdin to " << shown << '\n';
}

int runCp(app::Context& context, CpOptions& options) {
    // validate
    const auto fromSpec = parseRemote(options.source);
    const auto toSpec = parseRemote(options.destination);
    if (fromSpec && toSpec)
        throw UsageError("both SRC and DST name a sandbox; copy to this machine first, then on");
    if (!fromSpec && !toSpec)
        throw UsageError(
            "one side must be SANDBOX:PATH, e.g. rossoctl sandbox cp orders:/workspace/out ./out "
            "(a local path with a ':' can be written ./a:b)");
    const RemoteSpec remote = fromSpec ? *fromSpec : *toSpec;
    if (!remote.namespaceName.empty()) {
        model::validateDnsLabel(remote.namespaceName, "namespace");
        const std::string& given = context.globals().config.namespaceName;
        if (!given.empty() && given != remote.namespaceName)
            throw UsageError(fmt::format(
                "{}/{}: names namespace \"{}\" but -n says \"{}\"; give the namespace once",
                remote.namespaceName, remote.sandbox, remote.namespaceName, given));
    }
    model::validateDnsSubdomain(remote.sandbox, remote.runPod ? "pod name" : "sandbox name");
    if (remote.path.empty())
        throw UsageError(fmt::format("give a path after {}:, e.g. {}:/workspace", remote.sandbox,
                                     remote.sandbox));
    if (remote.path.find('\0') != std::string::npos) throw UsageError("the path holds a NUL");
    if (!options.container.empty()) model::validateDnsLabel(options.container, "--container");
    app::ExtractLimits limits;
    limits.maxBytes = parseCap(options.maxBytes, "--max-bytes");
    limits.maxEntries = parseCap(options.maxFiles, "--max-files");
    limits.maxFileBytes = parseCap(options.maxFileBytes, "--max-file-bytes");
    limits.flagPrefix = "--max-";
    const auto timeout = app::parseDuration(options.timeout, "--timeout");
    const bool toStdout = fromSpec && options.destination == kStdio;
    const bool fromStdin = toSpec && options.source == kStdio;
    const std::string base = app::copy::remoteBase(remote.path);
    if (fromSpec && !toStdout) {
        // What is taken whatever the pod has there; a directory's own case follows the probe.
        checkLocalTarget(localTarget(options.destination, base, false), options.force, false);
    } else if (toSpec && !fromStdin) {
        std::error_code error;
        if (!fs::exists(fs::symlink_status(options.source, error)))
            throw Error(fmt::format("{}: no such file or directory here",
                                    ui::escapeForTerminal(options.source)));
    }

    // complete
    const std::string ns =
        remote.namespaceName.empty() ? context.namespaceName() : remote.namespaceName;
    const json pod = remote.runPod
                         ? app::run::reachableRunPod(context.client(), ns, remote.sandbox,
                                                     /*running=*/true, "cp")
                         : app::runningSandboxPod(context.client(), context.discovery().sandboxes(),
                                                  context.clock().now(), ns, remote.sandbox,
                                                  "copy files to or from", /*takesRunPods=*/true);
    if (const auto missing = app::missingContainer(pod, options.container); !missing.empty())
        throw Error(fmt::format("{} {}",
                                remote.runPod
                                    ? "pod/" + remote.sandbox
                                    : "sandbox/" + remote.sandbox + " pod " +
                                          pod.value("metadata", json::object()).value("name", ""),
                                missing));
    app::copy::PodTarget podTarget{
        ns, pod.value("metadata", json::object()).value("name", ""), options.container, {}};
    if (timeout.count() > 0) podTarget.deadline = context.clock().monotonic() + timeout;
    if (podTarget.container.empty()) {
        const json containers =
            pod.value("spec", json::object()).value("containers", json::array());
        if (!containers.empty()) podTarget.container = containers.front().value("name", "");
    }
    const auto info = app::copy::probe(context.client(), podTarget, remote.path);
    const std::string shown = ui::escapeForTerminal(remote.sandbox + ":" + remote.path);

    // run
    if (toStdout) {
        copyToStdout(context, podTarget, info, remote, limits);
        return 0;
    }
    if (fromStdin) {
        copyFromStdin(context, podTarget, info, remote, limits.maxBytes);
        return 0;
    }
    if (fromSpec) {
        if (info.type == app::copy::RemoteType::Missing)
            throw Error(fmt::format("{}: no such file or directory in the pod", shown));
        const bool directory = info.type == app::copy::RemoteType::Directory;
        const fs::path target = localTarget(options.destination, base, directory);
        if (!directory && fs::is_directory(target))
            throw Error(fmt::format("{} is a file but {} is a directory; name the file to write",
                                    shown, ui::escapeForTerminal(target.string())));
        if (directory && fs::exists(target) && !fs::is_directory(target))
            throw Error(fmt::format("{} is a directory but {} is a file", shown,
                                    ui::escapeForTerminal(target.string())));
        checkLocalTarget(target, options.force, directory);
        app::copy::CopyStats stats;
        try {
            stats = app::copy::copyFromPod(context.client(), podTarget, remote.path, info,
                                           target.string(), limits);
        } catch (const Error& error) {
            // A cap or a damaged stream names entries the pod chose: never raw on a terminal.
            throw Error(ui::escapeForTerminal(error.what()), error.exitCode());
        }
        printResult(context, stats);
        return 0;
    }
    fs::path source = fs::absolute(options.source).lexically_normal();
    if (source.filename().empty()) source = source.parent_path();
    std::string remoteTarget = remote.path;
    if (info.type == app::copy::RemoteType::Directory) {
        if (remoteTarget.back() != '/') remoteTarget += '/';
        remoteTarget += source.filename().string();
    }
    if (fs::is_directory(options.source) && info.type == app::copy::RemoteType::File)
        throw Error(fmt::format("{} is a file in the pod; cannot copy a directory onto it", shown));
    printResult(context, app::copy::copyToPod(context.client(), podTarget, options.source,
                                              remoteTarget, info.hasTar));
    // `cp data S:/workspace/data` a second time: kubectl cp nests, so at least say so.
    if (info.type == app::copy::RemoteType::Directory && fs::is_directory(source) &&
        source.filename().string() == base) {
        std::string parent = remote.path;
        while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
        const auto slash = parent.rfind('/');
        parent = slash == std::string::npos ? "." : slash == 0 ? "/" : parent.substr(0, slash);
        context.err() << fmt::format(
            "note: {} was a directory already, so {} went into it as {}, as kubectl cp does; to "
            "update its files instead, copy to {}:{}\n",
            shown, ui::escapeForTerminal(base), ui::escapeForTerminal(remoteTarget),
            ui::escapeForTerminal(remote.sandbox), ui::escapeForTerminal(parent));
    }
    return 0;
}

}  // namespace

void registerSandboxCp(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<CpOptions>();
    auto* command = sandbox.add_subcommand(
        "cp", "Copy files and directories between this machine and a sandbox's pod");
    command
        ->add_option("source", options->source,
                     "[NAMESPACE/]SANDBOX:PATH, sandbox/SANDBOX:PATH, pod/NAME:PATH (a kept run "
                     "pod) or a local path")
        ->required();
    command
        ->add_option("destination", options->destination,
                     "[NAMESPACE/]SANDBOX:PATH, sandbox/SANDBOX:PATH, pod/NAME:PATH (a kept run "
                     "pod) or a local path")
        ->required();
    command->add_option("-c,--container", options->container,
                        "Container name (default: the pod's first container)");
    command->add_flag("--force", options->force,
                      "Write into a local file or directory that already exists");
    command
        ->add_option("--max-bytes", options->maxBytes,
                     "Refuse a copy from the pod whose files add up to more than this")
        ->capture_default_str();
    command
        ->add_option("--max-files", options->maxFiles,
                     "Refuse a copy from the pod with more entries than this")
        ->capture_default_str();
    command
        ->add_option("--max-file-bytes", options->maxFileBytes,
                     "Refuse a file from the pod larger than this")
        ->capture_default_str();
    command
        ->add_option("--timeout", options->timeout,
                     "Give up when the copy takes longer than this (0 = no limit)")
        ->capture_default_str();
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox cp orders:/workspace/out ./out -n team1\n"
        "  rossoctl sandbox cp ./data orders:/workspace\n"
        "  rossoctl sandbox cp orders:/workspace/report.pdf report.pdf --force\n"
        "  rossoctl sandbox cp team1/orders:/workspace/out ./out\n"
        "  rossoctl sandbox cp orders:/workspace/result.json - | jq .\n"
        "  echo 'print(42)' | rossoctl sandbox cp - orders:/workspace/main.py\n"
        "  rossoctl sandbox cp pod/rossoctl-run-d6382408:/workspace/out ./out -n team1\n"
        "\n"
        "A path starting with / or . or without a ':' is local (write ./a:b for a local a:b);\n"
        "before the ':' comes SANDBOX, sandbox/SANDBOX (as -o name prints it) or\n"
        "NAMESPACE/SANDBOX, as kubectl cp reads NAMESPACE/POD; pod/NAME is a pod that\n"
        "\"sandbox run --keep\" kept (a namespace named pod is given with -n).\n"
        "Out of the pod DST is the copy, as kubectl cp reads it: a directory's contents land in\n"
        "DST (created when missing), never in DST/NAME, so running the same copy again stops\n"
        "with exit 2 instead of nesting; a file becomes DST, or DST/NAME when DST is a\n"
        "directory. A DST that exists (a file, or a directory with contents) is refused with\n"
        "exit 2 unless --force. Into the pod, SRC lands in DST/NAME when DST is a directory\n"
        "there, else as DST (as kubectl cp does); files there are replaced. A directory copied\n"
        "again onto its own name (./data to S:/workspace/data) nests as DST/data, which a\n"
        "note says, with the parent to copy to instead.\n"
        "'-' as DST writes one file's bytes to stdout (escaped on a terminal) once the whole\n"
        "file is in within the caps and --timeout; '-' as SRC reads stdin into one file in the\n"
        "pod (write ./- for a local file named '-').\n"
        "Uses tar in the pod when it has one, else sh and cat (file by file). What comes from\n"
        "the pod lands below the local destination and nowhere else: links that leave it,\n"
        "absolute links and setuid/setgid bits are refused, and the caps above apply; a single\n"
        "file lands as a regular file or not at all.\n"
        "Exit codes: 0 copied; 1 the sandbox, its pod or the path cannot be found, a command\n"
        "failed in the pod, a cap or --timeout was reached or an entry was refused; 2 invalid\n"
        "arguments or a local destination that exists (without --force).");
    onRun(command, host, options, &runCp);
}

}  // namespace rossoctl::commands
