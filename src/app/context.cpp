#include "rossoctl/app/context.hpp"

#include <fmt/format.h>

#include <iostream>

#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::app {

namespace {

bool localeIsUtf8In(const kube::Environment& env) {
    const auto variable = [&](const char* name) {
        return env.getenv ? env.getenv(name).value_or("") : std::string();
    };
    return ui::localeIsUtf8(variable("LC_ALL"), variable("LC_CTYPE"), variable("LANG"));
}

// Outside UTF-8 a terminal obeys bytes 0x80..0x9f as C1 controls: whatever any path writes to
// it (a pod's bytes, a server's words, an escaper that assumed UTF-8) reaches it as escapes.
// In UTF-8 the same characters come as two or three bytes: stdout on a terminal escapes them
// too, as -o json/yaml/jsonpath print a server's strings unescaped (kept so in a pipe).
Streams guardStreams(Streams streams, const kube::Environment& env,
                     std::unique_ptr<std::ostream>& out, std::unique_ptr<std::ostream>& err) {
    if (!streams.outIsTty && !streams.errIsTty) return streams;
    if (localeIsUtf8In(env)) {
        if (!streams.outIsTty) return streams;
        out = std::make_unique<ui::UnicodeControlEscapingStream>(streams.out);
    } else {
        if (streams.outIsTty) out = std::make_unique<ui::EightBitEscapingStream>(streams.out);
        if (streams.errIsTty) err = std::make_unique<ui::EightBitEscapingStream>(streams.err);
    }
    return Streams{streams.in,          out ? *out : streams.out, err ? *err : streams.err,
                   streams.inIsTty,     streams.outIsTty,         streams.errIsTty,
                   streams.inDescriptor};
}

}  // namespace

Context::Context(Streams streams, GlobalOptions globals, const Clock& clock, kube::Environment env,
                 TransportFactory transportFactory, const kube::CancelFlag* cancel, Random* random,
                 model::HostResolver* resolver)
    : streams_(guardStreams(streams, env, guardedOut_, guardedErr_)),
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
        // As client-go reads it: a bare integer is seconds ("0", the default, is no time-out).
        std::string timeout = globals_.requestTimeout;
        if (!timeout.empty() && timeout.find_first_not_of("0123456789") == std::string::npos)
            timeout += "s";
        try {
            overrides.requestTimeout = parseDuration(timeout, "--request-timeout");
        } catch (const UsageError&) {
            // Refused (out of range): in the words the user typed, without the "s" added here.
            if (timeout != globals_.requestTimeout)
                parseDuration(globals_.requestTimeout, "--request-timeout");
            throw;
        }
        config_ = std::make_unique<kube::RestConfig>(kube::resolveRestConfig(overrides, env_));
    }
    return *config_;
}

bool Context::utf8Terminal() const {
    return localeIsUtf8In(env_);
}

// -v 8 prints what a server or webhook wrote: on a terminal, its control characters escaped.
kube::RequestTracer Context::tracer() const {
    if (!streams_.errIsTty) return kube::RequestTracer(streams_.err, globals_.verbosity);
    return kube::RequestTracer(
        streams_.err, globals_.verbosity,
        [utf8 = utf8Terminal()](std::string_view text) { return ui::escapeErrorText(text, utf8); });
}

std::unique_ptr<kube::Client> Context::newClient() {
    const auto& config = restConfig();
    return std::make_unique<kube::Client>(config, transportFactory_(config, cancel_), clock_,
                                          tracer(), cancel_, nullptr, kube::RetryPolicy{},
                                          &random());
}

std::unique_ptr<kube::Client> Context::newUncancellableClient() {
    const auto& config = restConfig();
    return std::make_unique<kube::Client>(config, transportFactory_(config, nullptr), clock_,
                                          tracer(), nullptr, nullptr, kube::RetryPolicy{},
                                          &random());
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
    context.err() << prefix << ui::escapeErrorText(what, context.utf8Terminal()) << '\n';
}

int runAndReport(Context& context, const std::function<int(Context&)>& body) {
    try {
        return body(context);
    } catch (const kube::ApiError& e) {
        // The reason and message are the server's (or a webhook's) words: the whole line is
        // escaped, its line breaks too, so none of it can pose as a line of rossoctl's own.
        const std::string reason = e.reason().empty() ? "Unknown" : e.reason().substr(0, 100);
        context.err() << ui::escapeErrorLine("Error from server (" + reason + "): " + e.what(),
                                             context.utf8Terminal())
                      << '\n';
        return kExitError;
    } catch (const UsageError& e) {
        report(context, "error: ", e.what());
        return kExitUsage;
    } catch (const Error& e) {
        report(context, "error: ", e.what());
        return e.exitCode();
    } catch (const nlohmann::json::exception& e) {
        // A field of another type than the API gives it: nlohmann's own words, without its tag.
        report(context,
               "error: malformed data from the server or kubeconfig: ", withoutJsonTag(e.what()));
        return kExitError;
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
