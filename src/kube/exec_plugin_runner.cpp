// Runs a client-go credential plugin as a child process: stdout is the reply, stderr goes to the
// user (plugins print prompts and hints there), and a hung plugin is killed.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/auth.hpp"
#include "rossoctl/unique_fd.hpp"

extern char** environ;

namespace rossoctl::kube {

namespace {

// A credential reply is a few kilobytes; more means the plugin is not speaking the protocol.
constexpr size_t kMaxReplyBytes = 4 * 1024 * 1024;

std::string pluginName(const ExecConfig& config) {
    return "exec plugin \"" + config.command + "\"";
}

bool isExecutableFile(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

// Resolves the command in the parent so "not found" is known before forking, as Go's LookPath.
std::string findExecutable(const ExecConfig& config) {
    if (config.command.find('/') != std::string::npos) {
        if (::access(config.command.c_str(), F_OK) == 0) return config.command;
    } else {
        const char* pathVariable = std::getenv("PATH");
        std::string searchPath = pathVariable ? pathVariable : "/usr/local/bin:/usr/bin:/bin";
        size_t start = 0;
        while (start <= searchPath.size()) {
            size_t end = searchPath.find(':', start);
            if (end == std::string::npos) end = searchPath.size();
            std::string dir = searchPath.substr(start, end - start);
            std::string candidate = (dir.empty() ? "." : dir) + "/" + config.command;
            if (isExecutableFile(candidate)) return candidate;
            start = end + 1;
        }
    }
    std::string message = pluginName(config) + ": executable not found";
    if (!config.installHint.empty()) {
        std::string hint = config.installHint;
        while (!hint.empty() && (hint.back() == '\n' || hint.back() == ' ')) hint.pop_back();
        message += "\n\n" + hint;
    } else {
        message += "; install it or fix the exec command of the user in the kubeconfig";
    }
    throw ConfigError(message);
}

// The parent's environment, then the kubeconfig's env entries, then KUBERNETES_EXEC_INFO.
std::vector<std::string> childEnvironment(const ExecConfig& config, const std::string& execInfo) {
    std::vector<std::string> entries;
    for (char** entry = environ; entry && *entry; ++entry) entries.emplace_back(*entry);
    auto set = [&](const std::string& name, const std::string& value) {
        std::string prefix = name + "=";
        for (auto& entry : entries) {
            if (entry.compare(0, prefix.size(), prefix) == 0) {
                entry = prefix + value;
                return;
            }
        }
        entries.push_back(prefix + value);
    };
    for (const auto& [name, value] : config.env) set(name, value);
    set("KUBERNETES_EXEC_INFO", execInfo);
    return entries;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& text : strings) out.push_back(text.data());
    out.push_back(nullptr);
    return out;
}

int remainingMs(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Waits for the child until the deadline; kills it after. Returns the wait status or -1.
int reap(pid_t pid, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        int status = 0;
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) return status;
        if (done < 0 && errno != EINTR) return -1;
        if (remainingMs(deadline) == 0) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

class ProcessExecPluginRunner : public ExecPluginRunner {
  public:
    explicit ProcessExecPluginRunner(std::chrono::milliseconds timeout) : timeout_(timeout) {}

    std::string run(const ExecConfig& config, const std::string& execInfo) override {
        std::string executable = findExecutable(config);
        std::vector<std::string> argv = {config.command};
        argv.insert(argv.end(), config.args.begin(), config.args.end());
        std::vector<std::string> envp = childEnvironment(config, execInfo);
        std::vector<char*> argvPointers = pointers(argv);
        std::vector<char*> envpPointers = pointers(envp);

        int outPipe[2];
        int errorPipe[2];  // carries errno from a failed execve; closed by a successful one
        if (::pipe2(outPipe, O_CLOEXEC) != 0) failSystem(config, "pipe");
        UniqueFd outRead(outPipe[0]), outWrite(outPipe[1]);
        if (::pipe2(errorPipe, O_CLOEXEC) != 0) failSystem(config, "pipe");
        UniqueFd errorRead(errorPipe[0]), errorWrite(errorPipe[1]);
        UniqueFd devNull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (devNull.get() < 0) failSystem(config, "open /dev/null");

        pid_t pid = ::fork();
        if (pid < 0) failSystem(config, "fork");
        if (pid == 0) {
            // Only async-signal-safe calls from here: the parent may have other threads.
            ::dup2(devNull.get(), STDIN_FILENO);
            ::dup2(outWrite.get(), STDOUT_FILENO);
            ::execve(executable.c_str(), argvPointers.data(), envpPointers.data());
            int error = errno;
            [[maybe_unused]] ssize_t ignored = ::write(errorWrite.get(), &error, sizeof error);
            ::_exit(127);
        }
        outWrite.reset();
        errorWrite.reset();
        auto deadline = std::chrono::steady_clock::now() + timeout_;

        int execError = 0;
        ssize_t got;
        while ((got = ::read(errorRead.get(), &execError, sizeof execError)) < 0 &&
               errno == EINTR) {
        }
        if (got == sizeof execError) {
            reap(pid, deadline);
            throw ConfigError(pluginName(config) + ": cannot run " + executable + ": " +
                              std::strerror(execError));
        }

        std::string reply;
        bool timedOut = !readAll(outRead.get(), deadline, reply);
        if (timedOut || reply.size() > kMaxReplyBytes) ::kill(pid, SIGKILL);
        int status = reap(pid, timedOut ? std::chrono::steady_clock::now() : deadline);
        if (timedOut || status < 0)
            throw ConfigError(fmt::format("{} did not finish within {:g}s", pluginName(config),
                                          static_cast<double>(timeout_.count()) / 1000.0));
        if (reply.size() > kMaxReplyBytes)
            throw ConfigError(pluginName(config) + " wrote more than 4 MiB to stdout");
        if (WIFSIGNALED(status))
            throw ConfigError(pluginName(config) + " was killed by signal " +
                              std::to_string(WTERMSIG(status)));
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
            throw ConfigError(pluginName(config) + " failed with exit code " +
                              std::to_string(WEXITSTATUS(status)));
        return reply;
    }

  private:
    [[noreturn]] static void failSystem(const ExecConfig& config, const char* call) {
        throw ConfigError(pluginName(config) + ": " + call + ": " + std::strerror(errno));
    }

    // Reads until end of stream; false when the deadline passed first.
    static bool readAll(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
        char buffer[16384];
        for (;;) {
            pollfd poller{fd, POLLIN, 0};
            int ready = ::poll(&poller, 1, remainingMs(deadline));
            if (ready < 0 && errno == EINTR) continue;
            if (ready == 0) return false;
            if (ready < 0) return true;
            ssize_t count = ::read(fd, buffer, sizeof buffer);
            if (count < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (count <= 0) return true;
            out.append(buffer, static_cast<size_t>(count));
            if (out.size() > kMaxReplyBytes) return true;
        }
    }

    std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<ExecPluginRunner> makeProcessExecPluginRunner(std::chrono::milliseconds timeout) {
    return std::make_unique<ProcessExecPluginRunner>(timeout);
}

}  // namespace rossoctl::kube
