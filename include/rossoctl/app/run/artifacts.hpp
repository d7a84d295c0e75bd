#pragma once
// Artifacts a run wrote, arriving as a tar stream from the pod: hashed (SHA-256) and, when a
// directory is given, written below it by the safe extractor (rossoctl/app/extract.hpp).
#include "rossoctl/app/extract.hpp"

namespace rossoctl::app::run {

using Artifact = ExtractedFile;
using ArtifactCollector = TarExtractor;
using app::safeRelativePath;
using app::sha256Hex;

}  // namespace rossoctl::app::run
