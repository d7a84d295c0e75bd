// `sandbox port-forward`: the accept loop, a thread per connection (each its own client and
// stream) and a watch on the pod. Nothing here ends the loop but Ctrl-C and the pod's end.
#include "rossoctl/app/port_forward.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/unique_fd.hpp"

namespace rossoctl::app {
namespace {

constexpr std::chrono::milliseconds kAcceptSlice{200};
constexpr int kBacklog = 128;
// The pod watch is re-opened this often (from where it was): a cheap request, and the longest
// the watch thread takes to notice the loop has ended for a reason other than Ctrl-C.
constexpr std::chrono::seconds kWatchChunk{60};

struct Listener {
    UniqueFd socket;
    std::string address;  // "127.0.0.1:8080", "[::1]:8080"
    PortMapping ports;    // local is the port bound
};

// Lines from several threads, each whole.
class Lines {
  public:
    Lines(std::ostream& stream, bool utf8) : stream_(stream), utf8_(utf8) {}
    void write(const std::string& line) {
        std::lock_guard lock(mutex_);
        stream_ << line << '\n' << std::flush;
    }
    // A line quoting the server or the pod: escaped, nothing in it steers the terminal.
    void error(const std::string& line) { write(ui::escapeErrorText("error: " + line, utf8_)); }

  private:
    std::ostream& stream_;
    bool utf8_;
    std::mutex mutex_;
};

std::string errnoText(int error) {
    return std::strerror(error);
}

// Binds and listens; nullopt when an optional address is not on this machine.
std::optional<Listener> listenOn(const ListenAddress& address, PortMapping ports) {
    const bool v6 = address.ip.find(':') != std::string::npos;
    sockaddr_storage storage{};
    socklen_t length = 0;
    if (v6) {
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(ports.local);
        ::inet_pton(AF_INET6, address.ip.c_str(), &in6->sin6_addr);
        length = sizeof(sockaddr_in6);
    } else {
        auto* in4 = reinterpret_cast<sockaddr_in*>(&storage);
        in4->sin_family = AF_INET;
        in4->sin_port = htons(ports.local);
        ::inet_pton(AF_INET, address.ip.c_str(), &in4->sin_addr);
        length = sizeof(sockaddr_in);
    }
    const std::string shown = v6 ? "[" + address.ip + "]" : address.ip;
    UniqueFd socket(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int failure = socket.get() < 0 ? errno : 0;
    const int on = 1;
    if (!failure) ::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (!failure && v6) ::setsockopt(socket.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (!failure && ::bind(socket.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0)
        failure = errno;
    if (!failure && ::listen(socket.get(), kBacklog) != 0) failure = errno;
    if (failure) {
        if (address.optional) return std::nullopt;
        throw Error(
            fmt::format("unable to listen on {}:{}: {}", shown, ports.local, errnoText(failure)));
    }
    if (::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&storage), &length) == 0)
        ports.local = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                               : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
    return Listener{std::move(socket), fmt::format("{}:{}", shown, ports.local), ports};
}

// Every port on every address; a free port picked for LOCAL 0 is used on the other addresses
// too, as kubectl does.
std::vector<Listener> openListeners(const PortForwardPlan& plan) {
    std::vector<Listener> listeners;
    for (PortMapping ports : plan.ports) {
        bool bound = false;
        for (const auto& address : plan.addresses) {
            auto listener = listenOn(address, ports);
            if (!listener) continue;
            ports.local = listener->ports.local;
            listeners.push_back(std::move(*listener));
            bound = true;
        }
        if (!bound)
            throw Error(
                fmt::format("unable to listen on port {}: none of the addresses is on "
                            "this machine",
                            ports.local));
    }
    return listeners;
}

// Why the pod no longer serves the forward, or "" while it does.
std::string podEnd(const std::optional<nlohmann::json>& pod, const PortForwardPlan& plan) {
    if (!pod) return "pod " + plan.pod + " was deleted";
    if (uidOf(*pod) != plan.podUid) return "pod " + plan.pod + " was replaced";
    if (podFinished(*pod) && terminating(*pod)) return "pod " + plan.pod + " was deleted";
    if (podFinished(*pod))
        return "pod " + plan.pod + " has finished (" +
               (*pod).value("status", nlohmann::json::object()).value("phase", "") + ")";
    return {};
}

// Watches the pod on its own client until it goes away or `stop` is set.
class PodWatch {
  public:
    PodWatch(Context& context, const PortForwardPlan& plan, const kube::CancelFlag& stop,
             Lines& err)
        : client_(context.newClient()) {
        thread_ = std::thread([this, &context, &plan, &stop, &err] {
            try {
                kube::WaitOptions options;
                options.cancel = &stop;
                options.watchChunk = kWatchChunk;
                const auto result = kube::waitForObject(
                    *client_, context.clock(), kube::resources::pods(), plan.namespaceName,
                    plan.pod, options, [&](const std::optional<nlohmann::json>& pod) {
                        const std::string end = podEnd(pod, plan);
                        if (end.empty()) return false;
                        std::lock_guard lock(mutex_);
                        why_ = end;
                        return true;
                    });
                if (result.satisfied()) gone_.store(true);
            } catch (const std::exception& error) {
                if (!stop.cancelled())
                    err.error(std::string("cannot watch the pod, so its end will not stop the "
                                          "forward: ") +
                              error.what());
            }
        });
    }
    ~PodWatch() {
        if (thread_.joinable()) thread_.join();
    }
    PodWatch(const PodWatch&) = delete;
    PodWatch& operator=(const PodWatch&) = delete;

    bool gone() const { return gone_.load(); }
    std::string why() {
        std::lock_guard lock(mutex_);
        return why_;
    }

  private:
    std::unique_ptr<kube::Client> client_;
    std::atomic<bool> gone_{false};
    std::mutex mutex_;
    std::string why_;
    std::thread thread_;
};

// The connections being forwarded, each on its thread; finished ones are joined as new ones
// arrive, the rest when the forward ends.
class Connections {
  public:
    ~Connections() { joinAll(); }
    size_t active() {
        reap();
        return connections_.size();
    }
    template <class Work>
    void start(Work work) {
        auto& connection = connections_.emplace_back();
        connection.thread = std::thread([&connection, work = std::move(work)]() mutable {
            work();
            connection.finished.store(true);
        });
    }
    void joinAll() {
        for (auto& connection : connections_)
            if (connection.thread.joinable()) connection.thread.join();
        connections_.clear();
    }

  private:
    struct Connection {
        std::thread thread;
        std::atomic<bool> finished{false};
    };
    void reap() {
        connections_.remove_if([](Connection& connection) {
            if (!connection.finished.load()) return false;
            connection.thread.join();
            return true;
        });
    }
    std::list<Connection> connections_;  // stable addresses: each thread flags its own entry
};

// One accepted connection, start to end, on its own thread and client.
void forwardOne(std::unique_ptr<kube::Client> client, UniqueFd socket, const Listener& listener,
                const PortForwardPlan& plan, const kube::CancelFlag& stop, Lines& err) {
    const std::string ports = fmt::format("{} -> {}", listener.ports.local, listener.ports.remote);
    try {
        kube::PortForwardRequest request{plan.namespaceName, plan.pod, listener.ports.remote};
        const auto result =
            kube::forwardConnection(*client, request, socket.get(), &stop, plan.limits);
        if (!result.error.empty())
            err.error("an error occurred forwarding " + ports + ": " + result.error);
    } catch (const kube::ApiError& error) {
        err.error("an error occurred forwarding " + ports + ": " + error.what());
    } catch (const std::exception& error) {
        if (!stop.cancelled())
            err.error("an error occurred forwarding " + ports + ": " + error.what());
    }
}

}  // namespace

void portForward(Context& context, const PortForwardPlan& plan) {
    std::vector<Listener> listeners = openListeners(plan);
    for (const auto& listener : listeners)
        context.out() << "Forwarding from " << listener.address << " -> " << listener.ports.remote
                      << '\n';
    context.out().flush();

    Lines err(context.err(), context.utf8Terminal());
    kube::CancelFlag stop(context.cancelFlag());  // Ctrl-C, or the pod's end
    PodWatch watch(context, plan, stop, err);
    Connections connections;
    std::vector<pollfd> ready;
    for (const auto& listener : listeners) ready.push_back({listener.socket.get(), POLLIN, 0});
    while (!stop.cancelled() && !watch.gone()) {
        for (auto& entry : ready) entry.revents = 0;
        if (::poll(ready.data(), ready.size(), static_cast<int>(kAcceptSlice.count())) <= 0)
            continue;
        for (size_t i = 0; i < ready.size(); ++i) {
            if (!(ready[i].revents & POLLIN)) continue;
            UniqueFd socket(::accept4(ready[i].fd, nullptr, nullptr, SOCK_CLOEXEC));
            if (socket.get() < 0) continue;  // the client gave up already, or no descriptor left
            const Listener& listener = listeners[i];
            if (connections.active() >= plan.maxConnections) {
                err.error(fmt::format("{} connections are open already; refused one on {}",
                                      plan.maxConnections, listener.address));
                continue;
            }
            if (plan.logConnections)
                err.write(fmt::format("Handling connection for {}", listener.ports.local));
            connections.start([client = context.newClient(), socket = std::move(socket), &listener,
                               &plan, &stop, &err]() mutable {
                forwardOne(std::move(client), std::move(socket), listener, plan, stop, err);
            });
        }
    }
    stop.cancel();
    connections.joinAll();
    if (watch.gone()) throw Error("lost connection to pod: " + watch.why());
}

}  // namespace rossoctl::app
