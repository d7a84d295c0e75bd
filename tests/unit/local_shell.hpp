#pragma once
// Runs a command line that rossoctl sends to a pod here, with this machine's sh.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <string>
#include <utility>
#include <vector>

namespace rossoctl::testing {

// Runs argv here with `input` on a pipe whose write end stays open, as the exec's stdin does
// when it is not half-closed: {exit status, stdout}, or {-1, ""} when argv waited for an end
// of input and was killed after 10 s.
inline std::pair<int, std::string> runHereWithOpenStdin(const std::vector<std::string>& argv,
                                                        const std::string& input) {
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::close(in[0]);
        ::close(in[1]);
        ::close(out[0]);
        ::close(out[1]);
        std::vector<char*> words;
        for (const auto& word : argv) words.push_back(const_cast<char*>(word.c_str()));
        words.push_back(nullptr);
        ::execvp(words[0], words.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    REQUIRE(::write(in[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    int status = 0;
    bool exited = false;
    for (int waited = 0; waited < 1000 && !exited; ++waited) {
        exited = ::waitpid(child, &status, WNOHANG) == child;
        if (!exited) ::usleep(10'000);
    }
    if (!exited) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
    }
    ::close(in[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; exited && (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<size_t>(n));
    ::close(out[0]);
    if (!exited) return {-1, ""};
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

}  // namespace rossoctl::testing
