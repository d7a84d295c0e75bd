#include "fault_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness.hpp"

namespace harness {

namespace {

std::string makeTempDir(const char* prefix) {
    std::string pattern = std::string("/tmp/") + prefix + "-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    return pattern;
}

}  // namespace

FaultApiserver::FaultApiserver(const std::vector<std::string>& rules) {
    dir_ = makeTempDir("rossoctl-fault");
    kubeconfig_ = dir_ + "/kubeconfig";
    logPath_ = dir_ + "/requests.log";
    // Appended, not added: GCC 12 warns falsely on string + literal here (-Warray-bounds).
    std::string script = harness::sourceDir();
    script.append("/tests/integration/servers/fault_apiserver.py");
    std::vector<std::string> argv{"python3",          script,      "--cluster-dir", clusterDir(),
                                  "--kubeconfig-out", kubeconfig_, "--log",         logPath_};
    for (const auto& rule : rules) {
        argv.push_back("--rule");
        argv.push_back(rule);
    }
    int out[2];
    if (pipe(out)) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        int devNull = open("/dev/null", O_RDONLY);
        dup2(devNull, 0);
        std::vector<char*> args;
        for (auto& arg : argv) args.push_back(arg.data());
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(out[1]);
    // The script prints its port once it listens (after making its certificate).
    std::string line;
    pollfd fd{out[0], POLLIN, 0};
    while (line.find('\n') == std::string::npos && poll(&fd, 1, 30000) > 0) {
        char buffer[64];
        ssize_t n = read(out[0], buffer, sizeof buffer);
        if (n <= 0) break;
        line.append(buffer, static_cast<size_t>(n));
    }
    close(out[0]);
    port_ = std::atoi(line.c_str());
    if (port_ <= 0) throw std::runtime_error("the fault apiserver did not start");
}

FaultApiserver::~FaultApiserver() {
    if (pid_ > 0) {
        kill(pid_, SIGTERM);
        waitpid(pid_, nullptr, 0);
    }
    std::string command = "rm -rf '" + dir_ + "'";
    (void)std::system(command.c_str());
}

std::string FaultApiserver::log() const {
    std::ifstream file(logPath_);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

size_t FaultApiserver::count(const std::vector<std::string>& parts) const {
    std::istringstream lines(log());
    size_t matches = 0;
    for (std::string line; std::getline(lines, line);) {
        bool all = true;
        for (const auto& part : parts) all = all && line.find(part) != std::string::npos;
        if (all) ++matches;
    }
    return matches;
}

std::string writeTempFile(const std::string& name, const std::string& content, int mode) {
    std::string path = makeTempDir("rossoctl-input") + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    chmod(path.c_str(), static_cast<mode_t>(mode));
    return path;
}

}  // namespace harness
