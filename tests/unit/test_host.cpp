#include "test_host.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <thread>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/kube/websocket.hpp"

namespace rossoctl::testing {

namespace {

std::string pathOf(const std::string& url) {
    std::string path = url.rfind(kServer, 0) == 0 ? url.substr(kServer.size()) : url;
    return path.substr(0, path.find('?'));
}

std::vector<std::string> queryOf(const std::string& url) {
    std::vector<std::string> pairs;
    auto mark = url.find('?');
    if (mark == std::string::npos) return pairs;
    std::istringstream query(url.substr(mark + 1));
    for (std::string pair; std::getline(query, pair, '&');) pairs.push_back(pair);
    return pairs;
}

std::string unescape(const std::string& text) {
    std::string plain;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size()) {
            plain.push_back(static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16)));
            i += 2;
        } else {
            plain.push_back(text[i]);
        }
    }
    return plain;
}

std::string serverFrame(uint8_t firstByte, const std::string& payload) {
    std::string frame(1, static_cast<char>(firstByte));
    if (payload.size() < 126) {
        frame.push_back(static_cast<char>(payload.size()));
    } else if (payload.size() <= 0xFFFF) {
        frame.push_back(126);
        frame.push_back(static_cast<char>(payload.size() >> 8));
        frame.push_back(static_cast<char>(payload.size() & 0xFF));
    } else {
        frame.push_back(127);
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.push_back(static_cast<char>((uint64_t{payload.size()} >> shift) & 0xFF));
    }
    return frame + payload;
}

std::string execStatus(int exitCode) {
    if (exitCode == 0) return R"({"metadata":{},"status":"Success"})";
    nlohmann::json status = {
        {"status", "Failure"},
        {"reason", "NonZeroExitCode"},
        {"message", "command terminated with non-zero exit code"},
        {"details",
         {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(exitCode)}}}}}}};
    return status.dump();
}

// The byte count a command reads from stdin when it is told one, as the fake pod's `head -c N`
// (N written in the script, or "$K" naming sh -c's K-th argument): it then answers without
// waiting for stdin's half-close, as the real command does.
std::optional<size_t> lengthReadFromStdin(const std::vector<std::string>& command) {
    for (const auto& word : command) {
        const auto at = word.find("head -c ");
        if (at == std::string::npos) continue;
        std::string rest = word.substr(at + 8);
        if (rest.rfind("\"$", 0) == 0) {
            const size_t k = static_cast<size_t>(std::stoul(rest.substr(2)));
            if (command.size() > 3 + k) rest = command[3 + k];
        }
        if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0])))
            return static_cast<size_t>(std::stoull(rest));
    }
    return std::nullopt;
}

// Plays one ExecScript: the output frames once the command's stdin is closed (as a real
// command would answer after reading it), recording what the client wrote.
class ScriptedExec : public kube::UpgradedConnection {
  public:
    ScriptedExec(kube::HttpResponse handshake, std::string frames, bool waitForStdin,
                 const ExecSession& session, const FakeClock* hangingOn = nullptr,
                 const kube::CancelFlag* cancel = nullptr,
                 std::optional<size_t> readsStdinBytes = std::nullopt)
        : handshake_(std::move(handshake)),
          frames_(std::move(frames)),
          stdinOpen_(waitForStdin),
          stdinText_(session.stdinText),
          halfClosed_(session.stdinHalfClosed),
          readsStdinBytes_(readsStdinBytes),
          hangingOn_(hangingOn),
          cancel_(cancel) {}
    const kube::HttpResponse& handshake() const override { return handshake_; }
    size_t read(char* buffer, size_t size, std::chrono::milliseconds wait) override {
        if (hangingOn_ && offset_ == frames_.size() && ++quietReads_ <= 100'000) {
            // As the real connection: Ctrl-C ends a read that finds nothing.
            if (cancel_ && cancel_->cancelled())
                throw kube::TransportError(kube::TransportError::Kind::Cancelled, "interrupted");
            hangingOn_->advance(wait);
            throw kube::TransportError(kube::TransportError::Kind::Timeout, "no frame yet");
        }
        if (stdinOpen_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            throw kube::TransportError(kube::TransportError::Kind::Timeout, "no frame yet");
        }
        size_t n = std::min(size, frames_.size() - offset_);
        std::copy_n(frames_.data() + offset_, n, buffer);
        offset_ += n;
        return n;
    }
    size_t write(std::string_view bytes, std::chrono::milliseconds) override {
        written_.feed(bytes);
        while (auto frame = written_.next()) {
            if (frame->payload == std::string("\xff\x00", 2)) {
                halfClosed_->store(true);
                stdinOpen_.store(false);
            }
            if (!frame->payload.empty() && frame->payload[0] == 0) {
                stdinText_->append(frame->payload.substr(1));
                if (readsStdinBytes_ && stdinText_->size() >= *readsStdinBytes_)
                    stdinOpen_.store(false);
            }
        }
        return bytes.size();
    }

  private:
    kube::HttpResponse handshake_;
    std::string frames_;
    size_t offset_ = 0;
    std::atomic<bool> stdinOpen_;
    std::shared_ptr<std::string> stdinText_;
    std::shared_ptr<std::atomic<bool>> halfClosed_;
    std::optional<size_t> readsStdinBytes_;
    kube::WsFrameParser written_;
    const FakeClock* hangingOn_;
    const kube::CancelFlag* cancel_;
    int quietReads_ = 0;
};

class RoutedTransport : public kube::Transport {
  public:
    explicit RoutedTransport(RoutedServer& server) : server_(server) {}
    kube::HttpResponse send(const kube::HttpRequest& request) override {
        return server_.answer(request);
    }
    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest& request) override {
        return server_.upgrade(request);
    }
    void setClientCertificate(const kube::ClientCertificate&) override {}

  private:
    RoutedServer& server_;
};

}  // namespace

std::vector<std::string> FakeResolver::resolve(const std::string& host) {
    asked.push_back(host);
    auto found = addresses.find(host);
    if (found == addresses.end()) throw Error("cannot resolve \"" + host + "\": unknown host");
    return found->second;
}

std::string statusBody(long code, const std::string& reason, const std::string& message) {
    return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                          {"code", code},     {"reason", reason},   {"message", message}}
        .dump();
}

RoutedServer::Route& RoutedServer::route(const std::string& method,
                                         const std::string& pathAndQuery) {
    std::string path = pathOf(pathAndQuery);
    std::vector<std::string> query = queryOf(pathAndQuery);
    for (auto& existing : routes_)
        if (existing.method == method && existing.path == path && existing.query == query)
            return existing;
    routes_.push_back({method, path, query, {}});
    return routes_.back();
}

void RoutedServer::on(const std::string& method, const std::string& pathAndQuery, long status,
                      std::string body, kube::Headers headers) {
    route(method, pathAndQuery)
        .replies.push_back(
            {kube::HttpResponse{status, std::move(headers), std::move(body)}, {}, {}});
}

void RoutedServer::onStream(const std::string& method, const std::string& pathAndQuery,
                            std::vector<std::string> chunks) {
    route(method, pathAndQuery)
        .replies.push_back({kube::HttpResponse{200, {}, {}}, {}, std::move(chunks)});
}

void RoutedServer::onQuietWatch(const std::string& pathAndQuery) {
    route("GET", pathAndQuery).quiet = true;
}

void RoutedServer::onFail(const std::string& method, const std::string& pathAndQuery,
                          kube::TransportError::Kind kind, const std::string& message) {
    route(method, pathAndQuery).replies.push_back({{}, kube::TransportError(kind, message), {}});
}

void RoutedServer::onExec(const std::string& namespaceName, const std::string& pod,
                          ExecScript script) {
    execScripts_[namespaceName + "/" + pod].push_back(std::move(script));
}

void RoutedServer::onExec(const std::string& namespaceName, const std::string& pod,
                          ExecResponder answer) {
    execResponders_[namespaceName + "/" + pod] = std::move(answer);
}

void RoutedServer::onExecIn(const std::string& namespaceName, const std::string& pod,
                            const std::string& container, ExecScript script) {
    execContainerScripts_[namespaceName + "/" + pod + "/" + container] = std::move(script);
}

kube::HttpResponse RoutedServer::answer(const kube::HttpRequest& request) {
    std::unique_lock lock(mutex_);
    requests.push_back(request);
    if (requests.size() > maxRequests) FAIL("more than " << maxRequests << " requests: a loop");
    if (clock) clock->advance(latency);
    if (onRequest) onRequest(request);
    const std::string path = pathOf(request.url);
    const std::vector<std::string> query = queryOf(request.url);
    // The most specific route wins: an exact path over a prefix, then more query parameters.
    Route* best = nullptr;
    auto rank = [](const Route& route) {
        return std::make_pair(route.path.back() != '*', route.query.size());
    };
    for (auto& candidate : routes_) {
        if (candidate.method != request.method) continue;
        const bool prefix = candidate.path.back() == '*';
        if (prefix ? path.rfind(candidate.path.substr(0, candidate.path.size() - 1), 0) != 0
                   : candidate.path != path)
            continue;
        bool carried = std::all_of(
            candidate.query.begin(), candidate.query.end(), [&](const std::string& pair) {
                return std::find(query.begin(), query.end(), pair) != query.end();
            });
        if (carried && (!best || rank(candidate) > rank(*best))) best = &candidate;
    }
    ScriptedReply reply;
    if (best && best->quiet) {
        lock.unlock();
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!(cancel && cancel->cancelled())) {
            if (std::chrono::steady_clock::now() > giveUp)
                FAIL("a quiet watch was never cancelled");
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        throw kube::TransportError(kube::TransportError::Kind::Cancelled, "cancelled");
    }
    if (best && !best->replies.empty()) {
        reply = best->replies.front();
        if (best->replies.size() > 1) best->replies.pop_front();
    } else {
        reply.response = {404, {}, kNotFoundBody};
    }
    lock.unlock();  // a streamed body may take a while: other threads go on meanwhile
    if (reply.error) throw *reply.error;
    if (!reply.chunks.empty() && request.onBodyChunk) {
        for (const auto& chunk : reply.chunks)
            if (!request.onBodyChunk(chunk)) break;
    }
    return reply.response;
}

std::unique_ptr<kube::UpgradedConnection> RoutedServer::upgrade(const kube::HttpRequest& request) {
    if (onOtherUpgrade && !pathOf(request.url).ends_with("/exec")) {
        {
            std::lock_guard lock(mutex_);
            requests.push_back(request);
        }
        return onOtherUpgrade(request);
    }
    std::lock_guard lock(mutex_);
    requests.push_back(request);
    ExecSession session;
    const std::string path = pathOf(request.url);  // /api/v1/namespaces/NS/pods/POD/exec
    const std::string prefix = "/api/v1/namespaces/";
    std::string rest = path.substr(prefix.size());
    std::string namespaceName = rest.substr(0, rest.find('/'));
    std::string pod = rest.substr(rest.find("/pods/") + 6);
    pod = pod.substr(0, pod.find('/'));
    session.pod = namespaceName + "/" + pod;
    bool withStdin = false;
    for (const auto& pair : queryOf(request.url)) {
        std::string key = pair.substr(0, pair.find('='));
        std::string value = unescape(pair.substr(pair.find('=') + 1));
        if (key == "command") session.command.push_back(value);
        if (key == "container") session.container = value;
        if (key == "tty") session.tty = value == "true";
        if (key == "stdin") withStdin = value == "true";
    }
    execs.push_back(session);

    ExecScript script;
    auto responder = execResponders_.find(session.pod);
    auto scripts = execScripts_.find(session.pod);
    auto inContainer = execContainerScripts_.find(session.pod + "/" + session.container);
    if (inContainer != execContainerScripts_.end()) {
        script = inContainer->second;
    } else if (responder != execResponders_.end()) {
        script = responder->second(session.command);
    } else if (scripts == execScripts_.end() || scripts->second.empty()) {
        return std::make_unique<ScriptedExec>(kube::HttpResponse{404, {}, kNotFoundBody}, "", false,
                                              session);
    } else {
        script = scripts->second.front();
        if (scripts->second.size() > 1) scripts->second.pop_front();
    }
    if (script.handshakeStatus != 101)
        return std::make_unique<ScriptedExec>(
            kube::HttpResponse{script.handshakeStatus, {}, script.refusalBody}, "", false, session);
    std::string key;
    for (const auto& [name, value] : request.headers)
        if (name == "Sec-WebSocket-Key") key = value;
    kube::HttpResponse handshake{101,
                                 {{"sec-websocket-accept", kube::wsAcceptFor(key)},
                                  {"sec-websocket-protocol", script.protocol}},
                                 {}};
    std::string frames;
    if (!script.stdoutText.empty())
        frames += serverFrame(0x82, std::string(1, '\1') + script.stdoutText);
    if (!script.stderrText.empty())
        frames += serverFrame(0x82, std::string(1, '\2') + script.stderrText);
    if (script.hangs) {
        if (!clock) throw std::logic_error("a hanging exec script needs RoutedServer::clock");
        return std::make_unique<ScriptedExec>(handshake, frames, false, session, clock, cancel);
    }
    frames += serverFrame(
        0x82, std::string(1, '\3') +
                  (script.statusBody.empty() ? execStatus(script.exitCode) : script.statusBody));
    frames += serverFrame(0x88, "\x03\xe8");
    const auto reads =
        script.readsStdinBytes ? script.readsStdinBytes : lengthReadFromStdin(session.command);
    const bool waits = withStdin && reads.value_or(1) > 0;
    return std::make_unique<ScriptedExec>(handshake, frames, waits, session, nullptr, nullptr,
                                          reads);
}

std::vector<std::string> RoutedServer::sent() const {
    std::vector<std::string> lines;
    for (const auto& request : requests)
        lines.push_back(request.method + " " + pathOf(request.url));
    return lines;
}

std::vector<std::string> RoutedServer::writes() const {
    std::vector<std::string> lines;
    for (const auto& line : sent())
        if (line.rfind("GET ", 0) != 0) lines.push_back(line);
    return lines;
}

std::vector<kube::HttpRequest> RoutedServer::requestsTo(const std::string& method,
                                                        const std::string& path) const {
    std::vector<kube::HttpRequest> matching;
    for (const auto& request : requests)
        if (request.method == method && pathOf(request.url) == path) matching.push_back(request);
    return matching;
}

TestHost::TestHost() : root_(std::make_unique<CLI::App>("rossoctl")) {
    globals_.config.server = kServer;
    globals_.config.token = "t0ken";
    globals_.config.namespaceName = "team1";
    server.clock = &clock;
    server.cancel = &cancel;
    environment["LANG"] = "C.UTF-8";  // a UTF-8 terminal, as most are; tests may change it
    root_->name("rossoctl");
    root_->fallthrough();
    root_->footer(commands::rootFooter());
    // The global flags the help examples use (main adds the rest).
    root_->add_option("-n,--namespace", globals_.config.namespaceName);
    root_->add_option("-v,--v", globals_.verbosity);
    root_->add_option("--kubeconfig", globals_.config.kubeconfig);
    root_->add_option("--request-timeout", globals_.requestTimeout);
    commands::registerVersion(*root_, *this);
    commands::registerCompletion(*root_, *this);
    commands::registerComplete(*root_, *this);
    commands::registerHelp(*root_, *this);
    commands::registerGroups(*root_, *this);
}

TestHost::~TestHost() = default;

CLI::App& TestHost::root() {
    return *root_;
}

app::Context& TestHost::context() {
    if (!context_) {
        kube::Environment env;
        env.getenv = [this](const std::string& name) {
            auto found = environment.find(name);
            return found == environment.end() ? std::optional<std::string>{}
                                              : std::optional<std::string>{found->second};
        };
        env.inClusterDir = "/nonexistent";
        app::Streams streams{
            in, out, err, stdinIsTerminal, stdoutIsTerminal, stderrIsTerminal, stdinDescriptor};
        context_ = std::make_unique<app::Context>(
            streams, globals_, clock, env,
            [this](const kube::RestConfig&, const kube::CancelFlag*) {
                return std::make_unique<RoutedTransport>(server);
            },
            &cancel, &random, &resolver);
        context_->setInterruptNote(&interruptNote);
    }
    return *context_;
}

int TestHost::run(std::vector<std::string> args) {
    setArguments(args);
    const int parsed = commands::parseCommandLine(*root_, args, out, err);  // as main parses
    return parsed >= 0 ? parsed : exitCode();
}

std::string TestHost::help(const std::vector<std::string>& path) {
    CLI::App* command = root_.get();
    for (const auto& name : path) command = command->get_subcommand(name);
    return command->help();
}

std::vector<std::vector<std::string>> helpExamples(const std::string& help) {
    std::vector<std::vector<std::string>> examples;
    std::string joined;
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\\') {
            joined += line.substr(0, line.size() - 1);
            continue;
        }
        joined += line;
        std::string text = std::move(joined);
        joined.clear();
        auto start = text.find("rossoctl ");
        if (start == std::string::npos || text.find_first_not_of(' ') != start) {
            auto piped = text.find("| rossoctl ");
            if (piped == std::string::npos) continue;
            start = piped + 2;
        }
        std::vector<std::string> argv;
        std::string word;
        bool quoted = false, inWord = false;
        for (size_t i = start + 9; i < text.size(); ++i) {
            char c = text[i];
            if (c == '\'') {
                quoted = !quoted;
                inWord = true;
                continue;
            }
            if (!quoted && (c == '|' || c == '>' || c == '&' || c == ')')) break;
            if (!quoted && c == ' ') {
                if (inWord) argv.push_back(word);
                word.clear();
                inWord = false;
                continue;
            }
            word.push_back(c);
            inWord = true;
        }
        if (inWord) argv.push_back(word);
        if (!argv.empty()) examples.push_back(argv);
    }
    return examples;
}

void checkUsageErrors(const std::vector<std::vector<std::string>>& argvs) {
    for (const auto& args : argvs) {
        TestHost host;
        std::string line;
        for (const auto& word : args) line += " " + word;
        const int exitCode = host.run(args);
        INFO("rossoctl" << line << "\n" << host.err.str());
        CHECK(exitCode == kExitUsage);
        CHECK(host.server.requests.empty());
        CHECK(host.resolver.asked.empty());
        CHECK(host.err.str().rfind("error: ", 0) == 0);
    }
}

void checkHelpExamples(const std::vector<std::string>& commandPath) {
    const auto examples = helpExamples(TestHost().help(commandPath));
    INFO("help of " << commandPath.back());
    CHECK_FALSE(examples.empty());
    for (const auto& argv : examples) {
        TestHost host;
        host.stdinIsTerminal = true;
        std::string line;
        for (const auto& arg : argv) line += " " + arg;
        INFO("rossoctl" << line);
        CHECK(host.run(argv) != kExitUsage);
        CHECK(host.err.str().find("--help") == std::string::npos);
    }
}

void TestHost::serveSandboxGroup() {
    server.on("GET", "/apis/agents.x-k8s.io", 200,
              R"({"kind":"APIGroup","name":"agents.x-k8s.io","versions":[)"
              R"({"version":"v1beta1"},{"version":"v1alpha1"}],)"
              R"("preferredVersion":{"version":"v1beta1"}})");
}

void TestHost::serveRuntimeGroup(bool served) {
    if (served)
        server.on("GET", "/apis/agent.rossoctl.dev", 200,
                  R"({"kind":"APIGroup","name":"agent.rossoctl.dev",)"
                  R"("versions":[{"version":"v1alpha1"}]})");
    else
        server.on("GET", "/apis/agent.rossoctl.dev", 404, kNotFoundBody);
}

nlohmann::json printedJson(const std::string& out) {
    nlohmann::json parsed;
    REQUIRE_NOTHROW(parsed = nlohmann::json::parse(out));
    CHECK(out == parsed.dump(4, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return parsed;
}

}  // namespace rossoctl::testing
