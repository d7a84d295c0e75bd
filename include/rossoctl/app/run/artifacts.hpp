#pragma once
// Artifacts a run wrote, arriving as a tar stream: hashed (SHA-256) and, when a directory is
// given, written below it and nowhere else (no absolute paths, no "..", no writes through
// symlinks, no symlink pointing out of it).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rossoctl/app/run/tar.hpp"

namespace rossoctl::app::run {

struct Artifact {
    std::string path;  // relative to the artifacts directory
    uint64_t bytes = 0;
    std::string sha256;  // lower-case hex
};

// "./a/b" -> "a/b"; "." -> ""; nullopt for an absolute path, a ".." component or a NUL.
std::optional<std::string> safeRelativePath(const std::string& tarPath);

std::string sha256Hex(std::string_view bytes);

class ArtifactCollector {
  public:
    // dir empty: hash and list only.
    explicit ArtifactCollector(std::string dir);
    ~ArtifactCollector();
    ArtifactCollector(const ArtifactCollector&) = delete;
    ArtifactCollector& operator=(const ArtifactCollector&) = delete;

    void feed(std::string_view bytes);
    // Creates the symlinks that stay inside the directory; throws Error on a truncated stream.
    void finish();

    const std::vector<Artifact>& artifacts() const { return artifacts_; }
    // One line per entry refused, saying why.
    const std::vector<std::string>& rejected() const { return rejected_; }

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<Artifact> artifacts_;
    std::vector<std::string> rejected_;
};

}  // namespace rossoctl::app::run
