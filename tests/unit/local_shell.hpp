#pragma once
// Runs a command line that rossoctl sends to a pod here, with this machine's sh.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace rossoctl::testing {

// How the command's stdin ends after `input`: never (a pipe whose write end stays open, as the
// exec's stdin when it is not half-closed), or at once (as a stream cut short).
enum class StdinAfterInput { StaysOpen, Ends };

// Runs argv here with `input` as its stdin: {exit status, stdout}, or {-1, ""} when it had not
// exited after 10 s (it waited for an end of input) and was killed.
inline std::pair<int, std::string> runHere(const std::vector<std::string>& argv,
                                           const std::string& input, StdinAfterInput after) {
    int in[2] = {-1, -1}, out[2];
    char ended[] = "/tmp/rossoctl-stdin-XXXXXX";
    if (after == StdinAfterInput::StaysOpen) {
        REQUIRE(::pipe(in) == 0);
    } else {
        in[0] = ::mkstemp(ended);  // a file: all of it read, then its end
        REQUIRE(in[0] >= 0);
        REQUIRE(::write(in[0], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
        REQUIRE(::lseek(in[0], 0, SEEK_SET) == 0);
        ::unlink(ended);
    }
    REQUIRE(::pipe(out) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::close(in[0]);
        if (in[1] >= 0) ::close(in[1]);
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
    if (in[1] >= 0)
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
    if (in[1] >= 0) ::close(in[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; exited && (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<size_t>(n));
    ::close(out[0]);
    if (!exited) return {-1, ""};
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

inline std::pair<int, std::string> runHereWithOpenStdin(const std::vector<std::string>& argv,
                                                        const std::string& input) {
    return runHere(argv, input, StdinAfterInput::StaysOpen);
}

}  // namespace rossoctl::testing
