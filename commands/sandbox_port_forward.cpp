// rossoctl sandbox port-forward: local ports to ports of a sandbox's pod, as kubectl
// port-forward does, over pods/portforward.
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/port_forward.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::commands {
namespace {

struct PortForwardOptions {
    std::string name;
    std::vector<std::string> ports;
    std::vector<std::string> addresses;
};

int runPortForward(app::Context& context, PortForwardOptions& options) {
    // validate
    options.name = objectName(options.name, {sandboxType()}, "sandbox");
    model::validateDnsSubdomain(options.name, "sandbox name");
    if (options.ports.empty())
        throw UsageError("give at least one port: rossoctl sandbox port-forward " + options.name +
                         " [LOCAL:]REMOTE...");
    app::PortForwardPlan plan;
    for (const auto& spec : options.ports) plan.ports.push_back(app::parsePortMapping(spec));
    plan.addresses = app::parseListenAddresses(
        options.addresses.empty() ? std::vector<std::string>{"localhost"} : options.addresses);
    plan.logConnections = context.globals().verbosity > 0;

    // complete
    plan.namespaceName = context.namespaceName();
    const auto pod = app::runningSandboxPod(context.client(), context.discovery().sandboxes(),
                                            context.clock().now(), plan.namespaceName, options.name,
                                            "forward ports to");
    plan.pod = pod.value("metadata", nlohmann::json::object()).value("name", "");
    plan.podUid = app::uidOf(pod);

    // run
    app::portForward(context, plan);
    return 0;
}

}  // namespace

void registerSandboxPortForward(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<PortForwardOptions>();
    auto* command = sandbox.add_subcommand(
        "port-forward", "Forward local ports to ports of a sandbox's pod (until Ctrl-C)");
    command->add_option("sandbox", options->name, "Sandbox name")->required();
    command->add_option("ports", options->ports,
                        "[LOCAL:]REMOTE: 8080, 9000:80; LOCAL 0 or empty (:80) picks a free "
                        "port, printed");
    command
        ->add_option("--address", options->addresses,
                     "Local addresses to listen on, comma-separated IPs or localhost "
                     "(127.0.0.1 and ::1)")
        ->default_str("localhost");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox port-forward orders 8080\n"
        "  rossoctl sandbox port-forward orders 9000:80 :5432 -n team1\n"
        "  rossoctl sandbox port-forward orders 8080 --address 0.0.0.0\n"
        "  rossoctl sandbox port-forward orders 0:8080 -v 1\n\n"
        "Each connection is its own stream to the pod (-v 1 prints a line for each); a slow\n"
        "reader on either side slows the other, nothing piles up. Ctrl-C ends it.\n\n"
        "Exit codes: 0 ended with Ctrl-C; 1 the sandbox or its Running pod cannot be found, a\n"
        "port cannot be listened on, or the pod went away (lost connection to pod); 2 invalid\n"
        "arguments.");
    onRun(command, host, options, &runPortForward);
}

}  // namespace rossoctl::commands
