// rossoctl project delete: after a check and a confirmation, app::deleteProject removes the
// project's rules in reverse order, then its namespace, and waits until the namespace is gone.
#include "rossoctl/app/project_delete.hpp"

#include <fmt/format.h>

#include <iostream>

#include "conventions.hpp"
#include "project_common.hpp"
#include "registry.hpp"
#include "rossoctl/app/project_write.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::commands {
namespace {

struct ProjectDeleteOptions {
    std::string name;
    bool wait = true;
    bool yes = false;
    bool force = false;
    std::string timeout = "5m";
};

bool confirm(app::Context& context, const std::string& name, size_t pods, bool adopted) {
    if (adopted)
        context.err() << fmt::format(
            "Remove rossoctl's quota, limits and policies from the adopted namespace \"{}\" (the "
            "namespace and its {} pod{} stay)? [y/N] ",
            name, pods, pods == 1 ? "" : "s");
    else
        context.err() << fmt::format(
            "Delete project \"{}\" and everything in it ({} pod{})? [y/N] ", name, pods,
            pods == 1 ? "" : "s");
    std::string answer;
    std::getline(context.in(), answer);
    return answer == "y" || answer == "Y" || answer == "yes";
}

int runProjectDelete(app::Context& context, ProjectDeleteOptions& options) {
    // validate
    options.name = objectName(options.name, {namespaceType()}, "project");
    model::validateProjectName(options.name);
    auto timeout = app::parseDuration(options.timeout, "--timeout");
    if (!options.yes && !context.streams().inIsTty)
        throw UsageError(fmt::format(
            "refusing to delete project \"{}\" without confirmation: stdin is not a terminal; "
            "pass --yes",
            options.name));

    // complete: the namespace must be rossoctl's (or --force), and the user must agree
    auto namespaceObject = getProjectNamespace(context, options.name);
    if (!model::isSandboxProject(namespaceObject) && !options.force)
        throw Error(
            fmt::format("namespace \"{}\" was not created by rossoctl (no label {}=true); "
                        "pass --force to delete it anyway",
                        options.name, model::kSandboxProjectLabel));
    // An adopted namespace was there before rossoctl: only --force deletes it.
    const bool adopted = app::isAdoptedProject(namespaceObject) && !options.force;
    if (!options.yes) {
        auto pods = context.client().list(kube::resources::pods(), options.name);
        if (!confirm(context, options.name, pods["items"].size(), adopted)) {
            context.err() << "Nothing deleted.\n";
            return 1;
        }
    }

    // run: the deletes and the wait are app::deleteProject's; each step is printed as it happens
    app::ProjectDeleteRequest request;
    request.name = options.name;
    request.terminating =
        namespaceObject.value("status", nlohmann::json::object()).value("phase", "") ==
        "Terminating";
    request.adopted = adopted;
    request.namespaceUid =
        namespaceObject.value("metadata", nlohmann::json::object()).value("uid", std::string{});
    request.wait = options.wait;
    request.timeout = timeout;
    request.onDeleted = [&](const std::string& object) { context.out() << object << " deleted\n"; };
    const bool progress = context.streams().errIsTty;  // a progress line only on a terminal
    request.onWaiting = [&](bool waiting) {
        if (!progress) return;
        if (waiting)
            context.err() << fmt::format("waiting for namespace {} to be deleted", options.name)
                          << std::flush;
        else
            context.err() << '\r' << std::string(60, ' ') << '\r';
    };
    app::deleteProject(context, request);
    if (adopted)
        context.out() << fmt::format(
            "namespace/{} kept (adopted): rossoctl's labels removed; delete it with --force\n",
            options.name);
    else if (options.wait)
        context.out() << fmt::format("namespace/{} is gone\n", options.name);
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
    command->add_flag(
        "--force", options->force,
        "Delete the namespace even though rossoctl did not create it (or adopted it)");
    command->footer(
        "Examples:\n"
        "  rossoctl project delete team1\n"
        "  rossoctl project delete team1 --yes --timeout 10m\n"
        "  rossoctl project delete team1 --yes --wait=false\n"
        "\n"
        "NetworkPolicy default-deny is left for the namespace deletion, so pods still running\n"
        "never get open egress. A namespace made a project with project create --adopt is not\n"
        "deleted: only the objects rossoctl wrote in it (still labelled managed-by=rossoctl)\n"
        "and its labels on it are removed; --force deletes it whole. Exit codes: 0 deleted; 1 API "
        "error, not found, refused or\n"
        "timed out; 2 invalid input or no --yes without a terminal.");
    onRun(command, host, options, &runProjectDelete);
}

}  // namespace rossoctl::commands
