#pragma once
// What the probe tests share: the probe scripts run here with /bin/sh and a PATH that holds
// only the tools an image would have, loopback listeners, and a reached control.
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "rossoctl/verify/checks.hpp"
#include "temp_dir.hpp"

namespace rossoctl::testing {

using namespace rossoctl::verify;

inline std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// Runs a probe command as the pod would: env -i with PATH holding only `tools` (and `stubs`,
// scripts standing in for a tool), plus the pod's `env` (NAME=value words); the probe's own
// search path (kImageToolPath) is that same directory, an image with only those tools.
inline ProbeOutput runLocally(const std::vector<std::string>& command,
                              const std::vector<std::string>& tools,
                              const std::map<std::string, std::string>& stubs = {},
                              const std::vector<std::string>& env = {}) {
    rossoctl::testing::TempDir dir;
    const std::string bin = dir.file("bin");
    std::filesystem::create_directories(bin);
    for (const auto& tool : tools)
        for (const char* prefix : {"/usr/bin/", "/bin/"})
            if (std::filesystem::exists(std::string(prefix) + tool)) {
                std::filesystem::create_symlink(std::string(prefix) + tool, bin + "/" + tool);
                break;
            }
    for (const auto& [name, script] : stubs) {
        std::ofstream(bin + "/" + name) << script;
        std::filesystem::permissions(bin + "/" + name, std::filesystem::perms::owner_all);
    }
    std::string line = "env -i PATH=" + quoted(bin);
    for (const auto& word : env) line += " " + quoted(word);
    // The image's system directories (kImageToolPath) hold exactly `tools` here.
    for (std::string word : command) {
        for (auto at = word.find(kImageToolPath); at != std::string::npos;
             at = word.find(kImageToolPath, at + bin.size()))
            word.replace(at, std::string(kImageToolPath).size(), bin);
        line += " " + testing::quoted(word);
    }
    line += " >" + quoted(dir.file("out")) + " 2>" + quoted(dir.file("err"));
    const int status = std::system(line.c_str());
    ProbeOutput output;
    output.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    output.stdoutText = slurp(dir.file("out"));
    output.stderrText = slurp(dir.file("err"));
    return output;
}

// A listening socket on loopback: connections to it succeed.
struct Listener {
    Listener() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::listen(fd, 8);
        socklen_t size = sizeof address;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
        port = ntohs(address.sin_port);
    }
    ~Listener() { ::close(fd); }
    int fd = -1;
    int port = 0;
};

// A loopback port nothing listens on.
inline EgressTarget closedTarget() {
    int port;
    {
        Listener probe;
        port = probe.port;
    }
    return *parseEgressTarget("http://127.0.0.1:" + std::to_string(port) + "/");
}

inline ControlResult reached(const std::string& address = "127.0.0.1") {
    ControlResult control;
    control.reached = true;
    control.address = address;
    control.roundTrip = std::chrono::microseconds(300);
    control.vantage = "this machine";
    return control;
}

inline bool mentions(const Finding& finding, const std::string& text) {
    for (const auto& line : finding.evidence)
        if (line.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace rossoctl::testing
