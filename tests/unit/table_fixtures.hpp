#pragma once
// Checks on a printed table, and a watch ended by Ctrl-C, shared by the tests that watch a
// list keep its columns.
#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test_host.hpp"

namespace rossoctl::testing {

// Ctrl-C when `path` is watched for the second time (its first stream has been printed).
inline void cancelOnSecondWatch(TestHost& host, const std::string& path) {
    auto watches = std::make_shared<int>(0);
    host.server.onRequest = [&host, watches, path](const kube::HttpRequest& request) {
        if (request.url.find(path + "?") != std::string::npos &&
            request.url.find("watch=true") != std::string::npos && ++*watches == 2)
            host.cancel.cancel();
    };
}

inline std::vector<std::string> linesOf(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Each column of the header (the first line) starts at the same offset on every line: the cell
// there begins right after a space, and the one before it has ended.
inline void checkAligned(const std::vector<std::string>& lines) {
    REQUIRE_FALSE(lines.empty());
    const std::string& header = lines.front();
    for (size_t at = 1; at < header.size(); ++at) {
        if (header[at] == ' ' || header[at - 1] != ' ') continue;
        for (const auto& line : lines) {
            INFO("column at " << at << ": \"" << line << "\"");
            REQUIRE(line.size() > at);
            CHECK(line[at - 1] == ' ');
            CHECK(line[at] != ' ');
        }
    }
}

}  // namespace rossoctl::testing
