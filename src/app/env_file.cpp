#include "rossoctl/app/env_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::app {

std::vector<model::EnvVar> readEnvFile(const std::string& path, const std::string& flag) {
    if (std::filesystem::is_directory(path))
        throw UsageError(fmt::format("{}: \"{}\" is a directory; give a file", flag, path));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw UsageError(
            fmt::format("{}: cannot read \"{}\": {}", flag, path, std::strerror(errno)));
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) throw UsageError(fmt::format("{}: cannot read \"{}\"", flag, path));
    return model::parseEnvFile(text.str(), flag + " " + path);
}

}  // namespace rossoctl::app
