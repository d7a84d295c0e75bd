#pragma once
// The Context every command gets: streams, global options, clock, and the client it builds
// lazily from them. No global state: tests build a Context with their own streams and a
// fake transport.
#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <ostream>
#include <string>

#include "rossoctl/app/interrupt_note.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/model/host_resolver.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/random.hpp"

namespace rossoctl::app {

struct GlobalOptions {
    kube::ConfigOverrides config;
    std::string requestTimeout = "0";
    int verbosity = 0;
    bool noColor = false;
};

struct Streams {
    std::istream& in;
    std::ostream& out;
    std::ostream& err;
    bool inIsTty = false;
    bool outIsTty = false;
    bool errIsTty = false;
    // The descriptor behind `in` when it is the process's own stdin (streamed by polling, so
    // an exited command does not wait for a terminal); -1 for any other stream.
    int inDescriptor = -1;
};

// Builds the transport for a resolved config; the seam unit tests replace.
using TransportFactory = std::function<std::unique_ptr<kube::Transport>(const kube::RestConfig&,
                                                                        const kube::CancelFlag*)>;

class Context {
  public:
    Context(Streams streams, GlobalOptions globals, const Clock& clock, kube::Environment env,
            TransportFactory transportFactory, const kube::CancelFlag* cancel,
            Random* random = nullptr, model::HostResolver* resolver = nullptr);
    ~Context();

    std::istream& in() { return streams_.in; }
    std::ostream& out() { return streams_.out; }
    std::ostream& err() { return streams_.err; }
    const Streams& streams() const { return streams_; }
    const GlobalOptions& globals() const { return globals_; }
    const Clock& clock() const { return clock_; }
    // The injected source, or the system's when none was given.
    Random& random() { return random_ ? *random_ : systemRandom_; }
    model::HostResolver& resolver() { return resolver_ ? *resolver_ : systemResolver_; }
    const kube::Environment& environment() const { return env_; }
    const kube::CancelFlag* cancelFlag() const { return cancel_; }
    bool cancelled() const { return cancel_ && cancel_->cancelled(); }
    // Where an operation says what a second Ctrl-C (an exit at once) would leave; none in a
    // Context that no signal reaches.
    InterruptNote* interruptNote() const { return interruptNote_; }
    void setInterruptNote(InterruptNote* note) { interruptNote_ = note; }
    // Color on stdout: a TTY, no --no-color, no NO_COLOR.
    bool color() const;
    // The terminal's locale is UTF-8 (LC_ALL, LC_CTYPE, LANG): else text from a pod or server
    // is shown with every byte from 0x80 up escaped.
    bool utf8Terminal() const;

    // Resolves kubeconfig and flags once (the "complete" step); throws ConfigError/UsageError.
    const kube::RestConfig& restConfig();
    kube::Client& client();
    kube::Discovery& discovery();
    // -n, else the context's namespace, else "default".
    std::string namespaceName();
    // A second client with its own connection, for work done in parallel.
    std::unique_ptr<kube::Client> newClient();
    // A client Ctrl-C does not stop, for the cleanup that must run after it.
    std::unique_ptr<kube::Client> newUncancellableClient();

  private:
    kube::RequestTracer tracer() const;
    // On a terminal outside UTF-8, stdout and stderr pass through these (before streams_).
    std::unique_ptr<std::ostream> guardedOut_;
    std::unique_ptr<std::ostream> guardedErr_;
    Streams streams_;
    GlobalOptions globals_;
    const Clock& clock_;
    kube::Environment env_;
    TransportFactory transportFactory_;
    const kube::CancelFlag* cancel_;
    InterruptNote* interruptNote_ = nullptr;
    Random* random_;
    model::HostResolver* resolver_;
    SystemRandom systemRandom_;
    model::SystemHostResolver systemResolver_;
    std::unique_ptr<kube::RestConfig> config_;
    std::unique_ptr<kube::Client> client_;
    std::unique_ptr<kube::Discovery> discovery_;
};

// Runs a command body and turns what it throws into the documented exit code and one
// line on stderr ("error: ..." or kubectl's "Error from server (Reason): ...").
int runCommand(Context& context, const std::function<int(Context&)>& body);

// Commands parse their --timeout flags with it; it lives in model, below the layers using it.
using model::parseDuration;

}  // namespace rossoctl::app
