#pragma once
// Warm pools by name: any SandboxWarmPool in the namespace, whether `sandbox pool NAME` made it,
// or it came from upstream's manifests or another tool. What a pool's pods run is read from the
// SandboxTemplate it refers to, so a run never lands on a different image than it asked for.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app::run {

// What the pods of a SandboxTemplate run, read from its first container; a field the template
// does not set is empty (workdir: the container's workingDir).
struct TemplateShape {
    RunPodShape shape;
    std::string container;
    std::vector<std::string> mounts;  // the container's volumeMounts' paths
};
std::optional<TemplateShape> templateShape(const nlohmann::json& sandboxTemplate);

// The shape flags a command was given; the others take the named pool's.
struct ShapeFlags {
    bool image = false;
    bool cpu = false;
    bool memory = false;
    bool workdir = false;
    bool runtimeClass = false;
};

// "--image busybox (its pods run python:3.12)" for each flag in `given` whose value in `wanted`
// is not the one in `have` (cpu and memory compared as quantities); a field `have` leaves
// empty differs from nothing.
std::vector<std::string> shapeDifferences(const RunPodShape& wanted, const RunPodShape& have,
                                          const ShapeFlags& given);

struct WarmPoolEntry {
    nlohmann::json pool;
    std::optional<TemplateShape> shape;  // nullopt: the template it refers to is not there
};
// Every SandboxWarmPool in ns (every namespace when empty) that `selector` selects, in namespace
// and name order; with `withShapes` each with its template's shape (a second LIST).
std::vector<WarmPoolEntry> listWarmPools(kube::Client& client, const std::string& ns,
                                         const std::string& selector, bool withShapes);

struct NamedWarmPool {
    RunPodShape shape;  // the run's on this pool's pods: the flags given, the pool's otherwise
    std::string container;
    bool ours = false;    // written by `sandbox pool` for this shape (its work dir an emptyDir)
    nlohmann::json pool;  // as read, for why a claim on it cold-started
};
// `sandbox run --pool=NAME` before anything is claimed: the pool and its template. Throws Error
// when there is no such pool (naming those in ns), no template, a shape flag given that its
// pods do not have (naming each), or nothing mounted at the work dir.
NamedWarmPool resolveNamedWarmPool(kube::Client& client, const std::string& ns,
                                   const std::string& name, const RunPodShape& requested,
                                   const ShapeFlags& given);
// The same for `pool` (SandboxWarmPool `name`) as already read: its template's GET and checks.
NamedWarmPool resolveWarmPool(kube::Client& client, const std::string& ns, const std::string& name,
                              const nlohmann::json& pool, const RunPodShape& requested,
                              const ShapeFlags& given);

// `sandbox pool NAME`: the template and pool NAME at `size` (0 deletes both). An existing pool
// keeps its shape: the flags not given take its values (`shape` is updated), one given that
// differs is an Error. Nothing rossoctl did not write is changed or deleted: a pool or template
// of that name made by hand or by another tool is an Error (nothing sent after the GETs).
// nullopt: size 0 and nothing of that name was there.
std::optional<WarmPoolStatus> reconcileNamedWarmPool(kube::Client& client, const std::string& ns,
                                                     const std::string& name, RunPodShape& shape,
                                                     const ShapeFlags& given, int size,
                                                     long lifetimeSeconds);

}  // namespace rossoctl::app::run
