// What sandbox run reads on this side before anything is sent: the --file archive and the
// --report path.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "sandbox_run_internal.hpp"

namespace rossoctl::commands {

namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(fmt::format("--file {}: cannot read it", path.string()));
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

// Each --file goes into the working directory under its own name; a directory goes whole. The
// tar entries only: the run ends the archive after its own.
std::string uploadArchive(const std::vector<std::string>& files, int64_t mtime) {
    if (files.empty()) return {};
    std::string archive;
    app::run::TarWriter writer(archive, mtime);
    for (const auto& file : files) {
        std::error_code error;
        const fs::path path(file);
        // A link named here is followed, as cp and docker cp do; links inside a directory
        // are refused below (walk 6 MINOR 19).
        const auto status = fs::status(path, error);
        fs::path normal = fs::absolute(path).lexically_normal();
        if (normal.filename().empty()) normal = normal.parent_path();
        const std::string base = normal.filename().string();
        if (error || !fs::exists(status))
            throw UsageError(fmt::format("--file {}: no such file or directory", file));
        const auto execBit = [](const fs::path& p) {
            return (fs::status(p).permissions() & fs::perms::owner_exec) != fs::perms::none ? 0755u
                                                                                            : 0644u;
        };
        if (fs::is_regular_file(status)) {
            writer.addFile(base, readFile(path), execBit(path));
        } else if (fs::is_directory(status)) {
            writer.addDirectory(base);
            for (auto it = fs::recursive_directory_iterator(path); it != fs::end(it); ++it) {
                const std::string name = base + "/" + fs::relative(it->path(), path).string();
                if (it->is_symlink())
                    throw UsageError(
                        fmt::format("--file {}: {} is a symlink; copy what it points to instead",
                                    file, it->path().string()));
                if (it->is_directory())
                    writer.addDirectory(name);
                else if (it->is_regular_file())
                    writer.addFile(name, readFile(it->path()), execBit(it->path()));
            }
        } else {
            throw UsageError(fmt::format("--file {}: not a regular file or directory", file));
        }
    }
    return archive;  // without its end: the run adds its end marker, then ends it
}

// --report FILE: checked before the run, so a run's result is never lost to a bad path.
void validateReportPath(const std::string& path) {
    if (path.empty()) return;
    if (path == "-")
        throw UsageError(
            "--report -: stdout is the command's own output; use -o json for the report on stdout");
    std::error_code error;
    if (fs::is_directory(path, error))
        throw UsageError(fmt::format("--report {}: a directory; name a file in it", path));
    fs::path directory = fs::path(path).parent_path();
    if (directory.empty()) directory = ".";
    if (!fs::is_directory(directory, error))
        throw UsageError(
            fmt::format("--report {}: no directory {} to write it in", path, directory.string()));
}

}  // namespace rossoctl::commands
