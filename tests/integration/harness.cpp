#include "harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/sandbox.hpp"

namespace harness {

using rossoctl::kube::resources::namespaces;

std::string clusterDir() {
    if (const char* dir = std::getenv("ROSSOCTL_CLUSTER_DIR")) return dir;
    return std::string(harness::sourceDir()).append("/.local-cluster");
}

std::string kubeconfigPath() {
    return clusterDir() + "/kubeconfig";
}
std::string limitedKubeconfigPath() {
    return clusterDir() + "/kubeconfig-limited";
}
// append, not +: GCC 12 at -O2 warns falsely on a temporary + literal (-Warray-bounds).
std::string kubectlPath() {
    return std::string(harness::sourceDir()).append("/tests/cluster/bin/kubectl");
}

std::string outsideUrl(bool byAddress) {
    std::ifstream file(clusterDir() + (byAddress ? "/outside-url-ip" : "/outside-url"));
    std::string url;
    std::getline(file, url);
    return url;
}

RunResult run(const std::vector<std::string>& argv, const std::string& input,
              const std::map<std::string, std::string>& env, int timeoutSeconds) {
    // Everything the child needs is built before fork: tests run commands from several
    // threads, and after fork only async-signal-safe calls are allowed.
    std::map<std::string, std::string> merged;
    for (char** entry = environ; *entry; ++entry) {
        std::string_view text(*entry);
        const size_t eq = text.find('=');
        if (eq != std::string_view::npos)
            merged[std::string(text.substr(0, eq))] = std::string(text.substr(eq + 1));
    }
    for (const auto& [name, value] : env) merged[name] = value;
    std::vector<std::string> envText;
    for (const auto& [name, value] : merged) envText.push_back(name + "=" + value);
    std::vector<char*> envp, args;
    for (auto& entry : envText) envp.push_back(entry.data());
    envp.push_back(nullptr);
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    // Close-on-exec, so a child started by another thread cannot hold these pipes open.
    int inPipe[2], outPipe[2], errPipe[2];
    if (pipe2(inPipe, O_CLOEXEC) || pipe2(outPipe, O_CLOEXEC) || pipe2(errPipe, O_CLOEXEC))
        return {};
    pid_t pid = fork();
    if (pid == 0) {
        dup2(inPipe[0], 0);
        dup2(outPipe[1], 1);
        dup2(errPipe[1], 2);
        execvpe(args[0], args.data(), envp.data());
        _exit(127);
    }
    close(inPipe[0]);
    close(outPipe[1]);
    close(errPipe[1]);
    // Feed stdin from a thread so a large input cannot deadlock against full output pipes.
    std::thread feeder([fd = inPipe[1], input] {
        signal(SIGPIPE, SIG_IGN);
        size_t done = 0;
        while (done < input.size()) {
            ssize_t n = write(fd, input.data() + done, input.size() - done);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        close(fd);
    });
    RunResult result;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    int open = 2;
    bool killed = false;
    while (open > 0) {
        int waitMs = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          deadline - std::chrono::steady_clock::now())
                                          .count());
        if (waitMs <= 0) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        if (poll(fds, 2, waitMs) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
            char buffer[65536];
            ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            } else {
                (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
            }
        }
    }
    for (auto& fd : fds)
        if (fd.fd >= 0) close(fd.fd);
    int status = 0;
    waitpid(pid, &status, 0);
    feeder.join();
    if (killed) result.err += "\n[harness: killed after timeout]";
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

RunResult rossoctl(const std::vector<std::string>& args, const std::string& input,
                   const std::map<std::string, std::string>& env, int timeoutSeconds) {
    std::vector<std::string> argv{harness::rossoctlBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::map<std::string, std::string> fullEnv{{"KUBECONFIG", kubeconfigPath()}};
    for (const auto& [name, value] : env) fullEnv[name] = value;
    RunResult result = run(argv, input, fullEnv, timeoutSeconds);
    // Never a terminal here: rossoctl's own output has no escape codes (run and exec pass the
    // sandbox's bytes through as they are). Locked: some tests run rossoctl from several
    // threads, and Catch's asserts are not thread-safe.
    const bool passThrough = std::find(args.begin(), args.end(), "run") != args.end() ||
                             std::find(args.begin(), args.end(), "exec") != args.end();
    if (!passThrough) {
        static std::mutex assertMutex;
        std::lock_guard lock(assertMutex);
        CHECK(result.out.find('\033') == std::string::npos);
        CHECK(result.err.find('\033') == std::string::npos);
    }
    return result;
}

rossoctl::kube::Client& admin() {
    static rossoctl::SystemClock clock;
    static std::unique_ptr<rossoctl::kube::Client> client = [] {
        rossoctl::kube::ConfigOverrides overrides;
        overrides.kubeconfig = kubeconfigPath();
        auto env = rossoctl::kube::Environment::fromProcess();
        auto config = rossoctl::kube::resolveRestConfig(overrides, env);
        return std::make_unique<rossoctl::kube::Client>(
            config, rossoctl::kube::makeCurlTransport(config, nullptr), clock,
            rossoctl::kube::RequestTracer(std::cerr, 0));
    }();
    return *client;
}

TestNamespace::TestNamespace(const std::string& prefix, bool create, const nlohmann::json& labels) {
    std::random_device random;
    std::ostringstream name;
    name << "it-" << prefix << "-" << std::hex << (random() & 0xffffff);
    name_ = name.str();
    if (create) {
        // Pod Security baseline unless the case sets a level, as everywhere on the local
        // cluster: a namespace that admits probes naming a host leaves every verify unproven.
        nlohmann::json withLevel = labels.is_object() ? labels : nlohmann::json::object();
        if (!withLevel.contains("pod-security.kubernetes.io/enforce"))
            withLevel["pod-security.kubernetes.io/enforce"] = "baseline";
        nlohmann::json ns = {{"apiVersion", "v1"},
                             {"kind", "Namespace"},
                             {"metadata", {{"name", name_}, {"labels", withLevel}}}};
        admin().create(namespaces(), "", ns);
        // ServiceAccount admission refuses pods until the controller has made "default" (it
        // retries for 1-2 s only): a slow controller-manager would fail the test's first pod.
        const bool ready = eventually([&] {
            return admin()
                .getIfExists(rossoctl::kube::resources::serviceAccounts(), name_, "default")
                .has_value();
        });
        if (!ready) throw std::runtime_error("no default ServiceAccount in " + name_ + " in 60s");
    }
}

TestNamespace::~TestNamespace() {
    try {
        // Its pods go at once: one with host access (a test's privileged or unconfined pod) left
        // Terminating would leave every verify after it unproven, on any node.
        rossoctl::kube::DeleteOptions now;
        now.gracePeriodSeconds = 0;
        const auto pods = admin().list(rossoctl::kube::resources::pods(), name_);
        for (const auto& pod : pods.value("items", nlohmann::json::array()))
            admin().remove(rossoctl::kube::resources::pods(), name_,
                           pod["metadata"].value("name", ""), now);
    } catch (...) {
        // Gone already, or going: the namespace's deletion ends them.
    }
    try {
        admin().remove(namespaces(), "", name_);
    } catch (...) {
        // Already gone (the test deleted it) is fine.
    }
}

bool eventually(const std::function<bool()>& fn, int timeoutSeconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    while (std::chrono::steady_clock::now() < deadline) {
        try {
            if (fn()) return true;
        } catch (...) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
}

void createCountedQuota(const std::string& ns, const nlohmann::json& quota) {
    admin().create(rossoctl::kube::resources::resourceQuotas(), ns, quota);
    const std::string name = quota["metadata"]["name"];
    const bool counted = eventually([&] {
        const auto stored = admin().get(rossoctl::kube::resources::resourceQuotas(), ns, name);
        const auto status = stored.value("status", nlohmann::json::object());
        for (const auto& [resource, limit] : quota["spec"]["hard"].items())
            if (!status.value("hard", nlohmann::json::object()).contains(resource) ||
                !status.value("used", nlohmann::json::object()).contains(resource))
                return false;
        return true;
    });
    if (!counted) throw std::runtime_error("quota " + name + " in " + ns + " not counted in 60s");
}

std::map<std::string, std::string> snapshot(const std::string& ns) {
    using namespace rossoctl::kube;
    std::map<std::string, std::string> objects;
    std::vector<ResourceRef> kinds = {
        resources::pods(),         resources::services(),        resources::resourceQuotas(),
        resources::limitRanges(),  resources::networkPolicies(), resources::sandboxes("v1beta1"),
        resources::deployments(),  resources::statefulSets(),    resources::jobs(),
        resources::agentRuntimes()};
    for (const auto& kind : kinds) {
        try {
            auto list = admin().list(kind, ns);
            for (const auto& item : list["items"])
                objects[kind.resource + "/" + item["metadata"]["name"].get<std::string>()] =
                    item["metadata"].value("resourceVersion", "");
        } catch (...) {
            objects[kind.resource + "/<unreadable>"] = "";
        }
    }
    if (auto nsObject = admin().getIfExists(namespaces(), "", ns))
        objects["namespace/" + ns] = (*nsObject)["metadata"].value("resourceVersion", "");
    return objects;
}

std::map<std::string, std::string> settledSnapshot(const std::string& ns) {
    auto last = snapshot(ns);
    for (int i = 0; i < 30; ++i) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        auto now = snapshot(ns);
        if (now == last) return now;
        last = std::move(now);
    }
    return last;
}

rossoctl::kube::ResourceRef sandboxRef() {
    static rossoctl::SystemClock clock;
    rossoctl::kube::Discovery discovery(admin(), clock, "");
    return discovery.sandboxes();
}

nlohmann::json getSandbox(const std::string& ns, const std::string& name) {
    return admin().get(sandboxRef(), ns, name);
}

std::string projectGateImage(const std::string& ns) {
    const auto namespaceObject =
        admin().getIfExists(rossoctl::kube::resources::namespaces(), "", ns);
    return namespaceObject ? rossoctl::model::recordedGateImage(*namespaceObject) : "";
}

std::string withoutGateWarning(const std::string& err) {
    const std::string warning = "Warning: the sandbox gets no egress gate";
    std::string kept;
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(warning, 0) != 0) kept += line + "\n";
    return kept;
}

nlohmann::json smallSandbox(const std::string& ns, const std::string& name,
                            const std::string& image) {
    rossoctl::model::SandboxOptions options;
    options.gateImage = projectGateImage(ns);
    options.name = name;
    options.namespaceName = ns;
    options.pod.image = image;
    options.pod.cpu = "100m";
    options.pod.memory = "64Mi";
    options.shutdownTime = std::chrono::system_clock::now() + std::chrono::hours(1);
    return rossoctl::model::buildSandbox(options, std::chrono::system_clock::now());
}

pid_t spawnRossoctl(const std::vector<std::string>& args, const SpawnPaths& paths) {
    std::vector<std::string> words = {rossoctlBinary()};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    const std::string kubeconfig = "KUBECONFIG=" + kubeconfigPath();
    std::vector<char*> env;
    for (char** entry = environ; *entry; ++entry)
        if (std::string_view(*entry).rfind("KUBECONFIG=", 0) != 0) env.push_back(*entry);
    env.push_back(const_cast<char*>(kubeconfig.c_str()));
    env.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!paths.in.empty())
        posix_spawn_file_actions_addopen(&actions, 0, paths.in.c_str(), O_RDONLY, 0);
    for (const auto& [descriptor, path] : {std::pair{1, &paths.out}, std::pair{2, &paths.err}})
        if (!path->empty())
            posix_spawn_file_actions_addopen(&actions, descriptor, path->c_str(),
                                             O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
    return pid;
}

}  // namespace harness
