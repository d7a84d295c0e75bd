#include "rossoctl/app/context.hpp"

#include <fmt/format.h>

#include <iostream>

#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::app {

Context::Context(Streams streams, GlobalOptions globals, const Clock& clock, kube::Environment env,
                 TransportFactory transportFactory, const kube::CancelFlag* cancel, Random* random,
                 model::HostResolver* resolver)
    : streams_(streams),
      globals_(std::move(globals)),
      clock_(clock),
      env_(std::move(env)),
      transportFactory_(std::move(transportFactory)),
      cancel_(cancel),
      random_(random),
      resolver_(resolver) {}

Context::~Context() = default;

bool Context::color() const {
    if (globals_.noColor || !streams_.outIsTty) return false;
    auto noColor = env_.getenv ? env_.getenv("NO_COLOR") : std::nullopt;
    return !noColor.has_value() || noColor->empty();  // no-color.org: set and not empty
}

const kube::RestConfig& Context::restConfig() {
    if (!config_) {
        kube::ConfigOverrides overrides = globals_.config;
        overrides.requestTimeout = parseDuration(globals_.requestTimeout, "--request-timeout");
        config_ = std::make_unique<kube::RestConfig>(kube::resolveRestConfig(overrides, env_));
    }
    return *config_;
}

std::unique_ptr<kube::Client> Context::newClient() {
    const auto& config = restConfig();
    return std::make_unique<kube::Client>(config, transportFactory_(config, cancel_), clock_,
                                          kube::RequestTracer(streams_.err, globals_.verbosity),
                                          cancel_, nullptr, kube::RetryPolicy{}, &random());
}

std::unique_ptr<kube::Client> Context::newUncancellableClient() {
    const auto& config = restConfig();
    return std::make_unique<kube::Client>(config, transportFactory_(config, nullptr), clock_,
                                          kube::RequestTracer(streams_.err, globals_.verbosity),
                                          nullptr, nullptr, kube::RetryPolicy{}, &random());
}

kube::Client& Context::client() {
    if (!client_) client_ = newClient();
    return *client_;
}

kube::Discovery& Context::discovery() {
    if (!discovery_) {
        discovery_ = std::make_unique<kube::Discovery>(
            client(), clock_, kube::defaultDiscoveryCacheDir(env_, restConfig().server));
    }
    return *discovery_;
}

std::string Context::namespaceName() {
    const std::string& name = restConfig().namespaceName;
    // Checked here, once for every command, so a bad -n fails before any request.
    model::validateDnsLabel(name, "namespace");
    return name;
}

namespace {

// An error may quote what a pod or server sent (a file name, an exec message).
void report(Context& context, const std::string& prefix, std::string_view what) {
    context.err() << prefix << ui::escapeErrorText(what) << '\n';
}

int runAndReport(Context& context, const std::function<int(Context&)>& body) {
    try {
        return body(context);
    } catch (const kube::ApiError& e) {
        report(context,
               "Error from server (" + (e.reason().empty() ? "Unknown" : e.reason()) + "): ",
               e.what());
        return kExitError;
    } catch (const UsageError& e) {
        report(context, "error: ", e.what());
        return kExitUsage;
    } catch (const Error& e) {
        report(context, "error: ", e.what());
        return e.exitCode();
    } catch (const std::exception& e) {
        report(context, "error: ", e.what());
        return kExitError;
    }
}

}  // namespace

int runCommand(Context& context, const std::function<int(Context&)>& body) {
    const int exitCode = runAndReport(context, body);
    // Whatever a command made of its interruption (a time-out, an unproven check), the caller
    // learns it was Ctrl-C; the command's own message has said what is left.
    if (exitCode != kExitOk && context.cancelled()) return kExitCancelled;
    return exitCode;
}

}  // namespace rossoctl::app
