#pragma once
// The whole CLI offline: a CommandHost whose Context talks to a RoutedServer that answers by
// method and path, records every request and plays back scripted exec sessions. Command tests
// drive `rossoctl ...` argv through it and check stdout, stderr, the exit code and what was sent.
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "command_host.hpp"
#include "kube_fakes.hpp"
#include "rossoctl/app/interrupt_note.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/model/host_resolver.hpp"
#include "rossoctl/random.hpp"

namespace rossoctl::testing {

inline const std::string kServer = "https://api.test:6443";
inline const std::string kNotFoundBody = R"({"kind":"Status","code":404,"reason":"NotFound"})";

// A Status body as the apiserver sends it with an error code.
std::string statusBody(long code, const std::string& reason, const std::string& message = {});

// One exec session: what the command printed and how it ended. A handshake status other
// than 101 refuses the upgrade with `refusalBody` (pod not found, forbidden).
struct ExecScript {
    std::string stdoutText;
    std::string stderrText;
    int exitCode = 0;
    long handshakeStatus = 101;
    std::string refusalBody;
    std::string protocol = "v5.channel.k8s.io";
    std::string statusBody;  // sent on the status channel instead of the one exitCode makes
    // Set: the command reads this many stdin bytes and answers (as `head -c N` does) without
    // waiting for stdin's half-close; unset, it answers once stdin is half-closed.
    std::optional<size_t> readsStdinBytes;
    // After its output the command never exits: each read waits its whole time (the fake clock
    // moves by it) and finds nothing; after 100,000 such reads the connection drops, so a
    // client without a time-out fails instead of hanging the test.
    bool hangs = false;
};

// A command that ran and exited with `exitCode`.
inline ExecScript execRan(std::string stdoutText, std::string stderrText, int exitCode) {
    ExecScript script;
    script.stdoutText = std::move(stdoutText);
    script.stderrText = std::move(stderrText);
    script.exitCode = exitCode;
    return script;
}
// An exec the apiserver refused (403, 404) with a Status body.
inline ExecScript execRefused(long status, std::string body) {
    ExecScript script;
    script.handshakeStatus = status;
    script.refusalBody = std::move(body);
    return script;
}

// What the command sent in one exec session.
struct ExecSession {
    std::string pod;  // "namespace/name"
    std::vector<std::string> command;
    std::string container;
    bool tty = false;
    std::shared_ptr<std::string> stdinText = std::make_shared<std::string>();
    // Whether the client half-closed stdin (v5's close frame on channel 0).
    std::shared_ptr<std::atomic<bool>> stdinHalfClosed = std::make_shared<std::atomic<bool>>();
};

// Answers requests by "METHOD /path" (the query ignored unless the route names one; a route
// with query parameters wins over one without when all its parameters are in the request; a
// path ending in '*' is a prefix, which an exact path beats).
// Replies queued on one route are used in order; the last one repeats. A request no route
// matches gets the 404 a real apiserver gives an unknown path, so tests script only what
// matters and check sent() for the rest.
class RoutedServer {
  public:
    void on(const std::string& method, const std::string& pathAndQuery, long status,
            std::string body, kube::Headers headers = {});
    void onJson(const std::string& method, const std::string& pathAndQuery, long status,
                const nlohmann::json& body) {
        on(method, pathAndQuery, status, body.dump());
    }
    // A watch or other streamed body, delivered in chunks.
    void onStream(const std::string& method, const std::string& pathAndQuery,
                  std::vector<std::string> chunks);
    // A watch that stays open and quiet until Ctrl-C (`cancel`), as a real one does.
    void onQuietWatch(const std::string& pathAndQuery);
    void onFail(const std::string& method, const std::string& pathAndQuery,
                kube::TransportError::Kind kind, const std::string& message);
    // pods/exec on namespace/pod: each upgrade plays the next script (the last one repeats).
    void onExec(const std::string& namespaceName, const std::string& pod, ExecScript script);
    // A pod that answers each exec from its command line (checked before the scripts above),
    // for sessions that run concurrently or carry names made at random.
    using ExecResponder = std::function<ExecScript(const std::vector<std::string>& command)>;
    void onExec(const std::string& namespaceName, const std::string& pod, ExecResponder answer);
    // Every exec in one container of the pod plays this script (checked before the above).
    void onExecIn(const std::string& namespaceName, const std::string& pod,
                  const std::string& container, ExecScript script);

    // Every request sent, in order ("GET /api/v1/namespaces/team1"), query stripped.
    std::vector<std::string> sent() const;
    // The requests other than GET (what the command changed).
    std::vector<std::string> writes() const;
    // The requests to one "METHOD /path", with their bodies and queries.
    std::vector<kube::HttpRequest> requestsTo(const std::string& method,
                                              const std::string& path) const;
    const kube::HttpRequest& last() const { return requests.back(); }

    std::vector<kube::HttpRequest> requests;
    std::vector<ExecSession> execs;
    // Each request moves this clock on by `latency`, so a deadline is reached without sleeping.
    const FakeClock* clock = nullptr;
    std::chrono::milliseconds latency{0};
    // More requests than this is a loop that would never end: the test fails instead.
    size_t maxRequests = 1000;
    // What ends a quiet watch (TestHost sets its Ctrl-C).
    const kube::CancelFlag* cancel = nullptr;
    // Sees each request as it arrives (e.g. to press Ctrl-C at a chosen moment).
    std::function<void(const kube::HttpRequest&)> onRequest;
    // Answers an upgrade other than pods/exec (pods/portforward) when set; exec's scripts
    // above stay as they are. Called from the thread that upgrades, without the server's lock.
    std::function<std::unique_ptr<kube::UpgradedConnection>(const kube::HttpRequest&)>
        onOtherUpgrade;

    // Used by the transport.
    kube::HttpResponse answer(const kube::HttpRequest& request);
    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest& request);

  private:
    struct Route {
        std::string method;
        std::string path;
        std::vector<std::string> query;  // "key=value" pairs the request must carry
        std::deque<ScriptedReply> replies;
        bool quiet = false;
    };
    Route& route(const std::string& method, const std::string& pathAndQuery);
    std::vector<Route> routes_;
    std::map<std::string, std::deque<ExecScript>> execScripts_;
    std::map<std::string, ExecResponder> execResponders_;
    std::map<std::string, ExecScript> execContainerScripts_;
    std::mutex mutex_;  // verify's checks send from several threads
};

// Answers from a table; a name not in it does not resolve (as NXDOMAIN would).
class FakeResolver : public model::HostResolver {
  public:
    std::vector<std::string> resolve(const std::string& host) override;
    std::map<std::string, std::vector<std::string>> addresses;
    std::vector<std::string> asked;
};

// 1, 2, 3, ...: names and keys made from it are the same on every run.
class CountingRandom : public Random {
  public:
    uint32_t next() override { return ++count_; }

  private:
    std::atomic<uint32_t> count_{0};
};

// A CommandHost whose Context talks to `server`; run() parses argv as main does and returns
// the exit code. Namespace "team1", server https://api.test:6443, a token, a FakeClock.
class TestHost : public commands::CommandHost {
  public:
    TestHost();
    ~TestHost() override;
    app::Context& context() override;
    CLI::App& root() override;

    int run(std::vector<std::string> args);
    // The help text of a subcommand path ({"sandbox","exec"}), as --help prints it.
    std::string help(const std::vector<std::string>& path);
    // What the command sent (as RoutedServer::sent()).
    std::vector<std::string> sent() const { return server.sent(); }

    // Discovery documents for the two API groups the commands look up.
    void serveSandboxGroup();
    void serveRuntimeGroup(bool served = true);
    void serveGroups() {
        serveSandboxGroup();
        serveRuntimeGroup();
    }

    FakeClock clock;
    FakeResolver resolver;
    CountingRandom random;
    RoutedServer server;
    std::ostringstream out, err;
    std::istringstream in;     // stdin; set with in.str("...") before run()
    int stdinDescriptor = -1;  // Streams::inDescriptor: a pipe of the test's, say
    bool stdinIsTerminal = false;
    bool stdoutIsTerminal = false;
    bool stderrIsTerminal = false;
    kube::CancelFlag cancel;                         // cancel() is Ctrl-C
    app::InterruptNote interruptNote;                // what a second Ctrl-C would write
    std::map<std::string, std::string> environment;  // what getenv sees (LANG=C.UTF-8)

  private:
    app::GlobalOptions globals_;
    std::unique_ptr<CLI::App> root_;
    std::unique_ptr<app::Context> context_;
};

// The rossoctl command lines in a help text's examples, as argv after "rossoctl" (shell
// quotes removed; a line continued with '\' joined; what a pipe feeds or `&&` adds dropped).
std::vector<std::vector<std::string>> helpExamples(const std::string& help);

// Runs every example of a command's help against an empty fake cluster (every object 404)
// with a terminal on stdin: each must parse and pass validation (exit code other than 2).
void checkHelpExamples(const std::vector<std::string>& commandPath);

// What a command printed with -o json, parsed. Every -o json is one style, kubectl's: one
// document indented by four spaces and a newline; anything else fails the calling test.
nlohmann::json printedJson(const std::string& out);

// Each argv (after "rossoctl") is a usage error: exit 2 and one "error: " line on stderr, with
// no request sent and no name looked up.
void checkUsageErrors(const std::vector<std::vector<std::string>>& argvs);

}  // namespace rossoctl::testing
