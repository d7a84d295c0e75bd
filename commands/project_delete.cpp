// rossoctl project delete: the project's rules in reverse order, then its namespace, and a
// wait until the namespace is gone.
#include <fmt/format.h>

#include <iostream>

#include "conventions.hpp"
#include "project_common.hpp"
#include "registry.hpp"
#include "rossoctl/app/partial_write.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;
namespace resources = kube::resources;

struct ProjectDeleteOptions {
    std::string name;
    bool wait = true;
    bool yes = false;
    bool force = false;
    std::string timeout = "5m";
};

bool confirm(app::Context& context, const std::string& name, size_t pods) {
    context.err() << fmt::format("Delete project \"{}\" and everything in it ({} pod{})? [y/N] ",
                                 name, pods, pods == 1 ? "" : "s");
    std::string answer;
    std::getline(context.in(), answer);
    return answer == "y" || answer == "Y" || answer == "yes";
}

void deleteIfPresent(app::Context& context, const kube::ResourceRef& ref, const std::string& ns,
                     const std::string& name, std::vector<std::string>& done,
                     const std::string& finishHint) {
    try {
        kube::DeleteOptions deleteOptions;
        deleteOptions.propagationPolicy = "Background";
        context.client().remove(ref, ns, name, deleteOptions);
    } catch (const kube::ApiError& error) {
        if (error.isNotFound()) return;
        app::rethrowPartialWrite("delete", ref, ns, name, done, finishHint);
    } catch (...) {
        app::rethrowPartialWrite("delete", ref, ns, name, done, finishHint);
    }
    std::string kind = ref.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
    done.push_back(kind + "/" + name);
    context.out() << kind << '/' << name << " deleted\n";
}

// Watches the namespace until it is deleted; a progress line on a terminal.
void waitUntilGone(app::Context& context, const std::string& name,
                   std::chrono::milliseconds timeout) {
    const bool progress = context.streams().errIsTty;
    if (progress)
        context.err() << fmt::format("waiting for namespace {} to be deleted", name) << std::flush;
    kube::WaitOptions waitOptions;
    waitOptions.timeout = timeout;
    waitOptions.cancel = context.cancelFlag();
    std::string phase = "still there";
    auto result =
        kube::waitForObject(context.client(), context.clock(), resources::namespaces(), "", name,
                            waitOptions, [&](const std::optional<json>& object) {
                                if (object) phase = (*object)["status"].value("phase", phase);
                                return !object;
                            });
    if (progress) context.err() << '\r' << std::string(60, ' ') << '\r';
    if (result.outcome == kube::WaitOutcome::Cancelled)
        throw Error(
            fmt::format("interrupted while waiting for namespace \"{}\" to be deleted", name));
    if (!result.satisfied())
        throw Error(fmt::format(
            "timed out after {}s waiting for namespace \"{}\" to be deleted (it is {}); check "
            "\"rossoctl project describe {}\" for what is left",
            timeout.count() / 1000, name, phase, name));
    context.out() << fmt::format("namespace/{} is gone\n", name);
}

int runProjectDelete(app::Context& context, ProjectDeleteOptions& options) {
    options.name = objectName(options.name, {namespaceType()}, "project");
    model::validateProjectName(options.name);
    auto timeout = app::parseDuration(options.timeout, "--timeout");
    if (!options.yes && !context.streams().inIsTty)
        throw UsageError(fmt::format(
            "refusing to delete project \"{}\" without confirmation: stdin is not a terminal; "
            "pass --yes",
            options.name));

    auto namespaceObject = getProjectNamespace(context, options.name);
    if (!model::isSandboxProject(namespaceObject) && !options.force)
        throw Error(
            fmt::format("namespace \"{}\" was not created by rossoctl (no label {}=true); "
                        "pass --force to delete it anyway",
                        options.name, model::kSandboxProjectLabel));
    bool terminating = namespaceObject["status"].value("phase", "") == "Terminating";
    if (!options.yes) {
        auto pods = context.client().list(resources::pods(), options.name);
        if (!confirm(context, options.name, pods["items"].size())) {
            context.err() << "Nothing deleted.\n";
            return 1;
        }
    }
    const std::string finishHint =
        fmt::format("run \"rossoctl project delete {} --yes\" again to finish", options.name);
    std::vector<std::string> done;
    if (!terminating) {
        auto& discovery = context.discovery();
        for (const auto& object : model::optionalProjectObjects(options.name)) {
            const auto& group = object.ref.group;
            if (!group.empty() && group != "networking.k8s.io" && !discovery.isServed(group))
                continue;
            deleteIfPresent(context, object.ref, options.name, object.object["metadata"]["name"],
                            done, finishHint);
        }
        // default-deny stays until the namespace goes, so running pods never get open egress.
        deleteIfPresent(context, resources::limitRanges(), options.name, model::kLimitRangeName,
                        done, finishHint);
        deleteIfPresent(context, resources::resourceQuotas(), options.name, model::kQuotaName, done,
                        finishHint);
        if (discovery.isServed("project.openshift.io"))
            deleteIfPresent(context, resources::projects(), "", options.name, done, finishHint);
        else
            deleteIfPresent(context, resources::namespaces(), "", options.name, done, finishHint);
    }
    if (options.wait) waitUntilGone(context, options.name, timeout);
    return 0;
}

}  // namespace

void registerProjectDelete(CLI::App& project, CommandHost& host) {
    auto options = std::make_shared<ProjectDeleteOptions>();
    auto* command = project.add_subcommand(
        "delete", "Delete a sandbox project: its egress rules, limits, quota, then the namespace");
    command->add_option("name", options->name, "Project (namespace) name")->required();
    command
        ->add_flag("--wait", options->wait,
                   "Wait until the namespace is gone (--wait=false to return at once)")
        ->default_str("true");
    command->add_option("--timeout", options->timeout, "How long --wait waits (0 = forever)")
        ->capture_default_str();
    command->add_flag("-y,--yes", options->yes,
                      "Do not ask for confirmation (needed without a TTY)");
    command->add_flag("--force", options->force,
                      "Delete the namespace even though rossoctl did not create it");
    command->footer(
        "Examples:\n"
        "  rossoctl project delete team1\n"
        "  rossoctl project delete team1 --yes --timeout 10m\n"
        "  rossoctl project delete team1 --yes --wait=false\n"
        "\n"
        "NetworkPolicy default-deny is left for the namespace deletion, so pods still running\n"
        "never get open egress. Exit codes: 0 deleted; 1 API error, not found, refused or\n"
        "timed out; 2 invalid input or no --yes without a terminal.");
    onRun(command, host, options, &runProjectDelete);
}

}  // namespace rossoctl::commands
