// Warm pools by name: listing them with their shape, taking from one, making one.
#include "rossoctl/app/run/named_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "rossoctl/app/project_gate.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/terminal_escape.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

// A pool's name list in an error stays one readable line.
constexpr size_t kNamesShown = 10;

// The server's words in an error: its control characters and line breaks shown, not obeyed, so
// none can pose as a line of rossoctl's own (the error's printer keeps line breaks).
std::string shown(const std::string& serverText) {
    return escapeForTerminal(serverText);
}

// "a, b, c and 4 more": at most kNamesShown of them, each escaped.
std::string listed(const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < kNamesShown; ++i)
        out += (i ? ", " : "") + shown(names[i]);
    if (names.size() > kNamesShown) out += fmt::format(" and {} more", names.size() - kNamesShown);
    return out;
}

// The server's objects are read defensively: a field of another type counts as unset.
const json& member(const json& object, const char* key) {
    static const json none = json::object();
    if (!object.is_object()) return none;
    const auto found = object.find(key);
    return found != object.end() && found->is_object() ? *found : none;
}

std::string text(const json& object, const char* key) {
    if (!object.is_object()) return "";
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

std::string templateRefOf(const json& pool) {
    return text(member(member(pool, "spec"), "sandboxTemplateRef"), "name");
}

bool sameQuantity(const std::string& a, const std::string& b) {
    if (a == b) return true;
    try {
        const double x = model::parseQuantity(a, "quantity");
        const double y = model::parseQuantity(b, "quantity");
        return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
    } catch (const Error&) {
        return false;
    }
}

// The shape `sandbox pool` recorded on its pool (shapeKey's JSON); nullopt when unreadable.
std::optional<RunPodShape> recordedShape(const json& pool) {
    const std::string key =
        text(member(pool, "metadata").value("annotations", json::object()), kPoolShapeAnnotation);
    const json parsed = json::parse(key, nullptr, false);
    if (!parsed.is_object()) return std::nullopt;
    RunPodShape shape;
    shape.image = text(parsed, "image");
    shape.cpu = text(parsed, "cpu");
    shape.memory = text(parsed, "memory");
    shape.workdir = text(parsed, "workdir");
    shape.runtimeClass = text(parsed, "runtimeClass");
    return shape;
}

// "pools in team1: a, b" or how to make one: for an error about a pool that is not there.
std::string poolsThere(kube::Client& client, const std::string& ns) {
    std::vector<std::string> names;
    const json list = client.list(sandboxWarmPools(), ns, {});
    for (const auto& pool : list.value("items", json::array()))
        names.push_back(text(member(pool, "metadata"), "name"));
    std::sort(names.begin(), names.end());
    if (names.empty())
        return fmt::format(
            "there is no SandboxWarmPool in {}; make one with: rossoctl sandbox pool NAME -n {} "
            "--size N",
            ns, ns);
    return fmt::format("pools in {}: {} (rossoctl sandbox pool list -n {})", ns, listed(names), ns);
}

bool isDnsLabel(const std::string& text) {
    try {
        model::validateDnsLabel(text, "name");
        return true;
    } catch (const UsageError&) {
        return false;
    }
}

std::string joinedNames(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
    return out;
}

// Deletes the object as it was read (its UID a precondition): one that replaced it since, which
// rossoctl has not looked at, is left alone.
void removeIfThere(kube::Client& client, const kube::ResourceRef& ref, const std::string& ns,
                   const std::string& name, const json& object) {
    kube::DeleteOptions options;
    options.preconditionUid = text(member(object, "metadata"), "uid");
    if (options.preconditionUid->empty()) options.preconditionUid.reset();
    try {
        client.remove(ref, ns, name, options);
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound()) throw;
    }
}

}  // namespace

std::optional<TemplateShape> templateShape(const json& sandboxTemplate) {
    const json& podSpec = member(member(member(sandboxTemplate, "spec"), "podTemplate"), "spec");
    const auto containers = podSpec.find("containers");
    if (containers == podSpec.end() || !containers->is_array() || containers->empty() ||
        !containers->front().is_object())
        return std::nullopt;
    const json& container = containers->front();
    TemplateShape found;
    found.container = text(container, "name");
    found.shape.image = text(container, "image");
    const json& resources = member(container, "resources");
    const auto quantity = [&](const char* name) {
        const std::string limit = text(member(resources, "limits"), name);
        return limit.empty() ? text(member(resources, "requests"), name) : limit;
    };
    found.shape.cpu = quantity("cpu");
    found.shape.memory = quantity("memory");
    found.shape.workdir = text(container, "workingDir");
    found.shape.runtimeClass = text(podSpec, "runtimeClassName");
    const auto mounts = container.find("volumeMounts");
    if (mounts != container.end() && mounts->is_array())
        for (const auto& mount : *mounts)
            if (auto path = text(mount, "mountPath"); !path.empty())
                found.mounts.push_back(std::move(path));
    return found;
}

std::vector<std::string> shapeDifferences(const RunPodShape& wanted, const RunPodShape& have,
                                          const ShapeFlags& given) {
    std::vector<std::string> differences;
    const auto compare = [&](bool flag, const char* name, const std::string& want,
                             const std::string& has, bool quantity) {
        if (!flag || (quantity ? sameQuantity(want, has) : want == has)) return;
        differences.push_back(fmt::format("{} {} (the pool's: {})", name,
                                          want.empty() ? "\"\"" : shown(want),
                                          has.empty() ? "none" : shown(has)));
    };
    compare(given.image, "--image", wanted.image, have.image, false);
    compare(given.cpu, "--cpu", wanted.cpu, have.cpu, true);
    compare(given.memory, "--memory", wanted.memory, have.memory, true);
    compare(given.runtimeClass, "--runtime-class", wanted.runtimeClass, have.runtimeClass, false);
    compare(given.workdir, "--workdir", wanted.workdir, have.workdir, false);
    return differences;
}

std::vector<WarmPoolEntry> listWarmPools(kube::Client& client, const std::string& ns,
                                         const std::string& selector, bool withShapes) {
    kube::ListOptions selected;
    selected.labelSelector = selector;
    json pools = client.list(sandboxWarmPools(), ns, selected);
    const json templates = withShapes ? client.list(sandboxTemplates(), ns, {}) : json::object();
    std::map<std::pair<std::string, std::string>, TemplateShape> shapes;
    for (const auto& object : templates.value("items", json::array())) {
        const json& metadata = member(object, "metadata");
        if (auto shape = templateShape(object))
            shapes.emplace(std::make_pair(text(metadata, "namespace"), text(metadata, "name")),
                           std::move(*shape));
    }
    std::vector<WarmPoolEntry> entries;
    for (auto& pool : pools.value("items", json::array())) {
        if (!pool.is_object()) continue;
        WarmPoolEntry entry;
        const auto found =
            shapes.find({text(member(pool, "metadata"), "namespace"), templateRefOf(pool)});
        if (found != shapes.end()) entry.shape = found->second;
        entry.pool = std::move(pool);
        entries.push_back(std::move(entry));
    }
    const auto key = [](const WarmPoolEntry& entry) {
        const json& metadata = member(entry.pool, "metadata");
        return std::make_pair(text(metadata, "namespace"), text(metadata, "name"));
    };
    std::stable_sort(entries.begin(), entries.end(),
                     [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return entries;
}

NamedWarmPool resolveNamedWarmPool(kube::Client& client, const std::string& ns,
                                   const std::string& name, const RunPodShape& requested,
                                   const ShapeFlags& given) {
    const auto pool = client.getIfExists(sandboxWarmPools(), ns, name);
    if (!pool)
        throw Error(fmt::format("SandboxWarmPool {} not found in {}; {}", name, ns,
                                poolsThere(client, ns)));
    return resolveWarmPool(client, ns, name, *pool, requested, given);
}

NamedWarmPool resolveWarmPool(kube::Client& client, const std::string& ns, const std::string& name,
                              const json& pool, const RunPodShape& requested,
                              const ShapeFlags& given) {
    const std::string templateName = templateRefOf(pool);
    // A name the API could not have given is no object's: never a path to send.
    const auto object = model::isDnsSubdomain(templateName)
                            ? client.getIfExists(sandboxTemplates(), ns, templateName)
                            : std::nullopt;
    if (!object)
        throw Error(fmt::format(
            "SandboxWarmPool {} in {} refers to SandboxTemplate \"{}\", which is not there: it "
            "has no sandboxes to take; see kubectl -n {} describe sandboxwarmpool {}",
            name, ns, shown(templateName), ns, name));
    const auto shape = templateShape(*object);
    if (!shape || shape->container.empty())
        throw Error(fmt::format("SandboxTemplate {} of SandboxWarmPool {} in {} names no container",
                                templateName, name, ns));
    if (!isDnsLabel(shape->container))
        throw Error(fmt::format(
            "SandboxTemplate {} of SandboxWarmPool {} in {} names its container \"{}\", which "
            "no pod can have",
            templateName, name, ns, shown(shape->container)));
    // The work dir is not the pool's to match: any of its mounts will do (checked below).
    ShapeFlags compared = given;
    compared.workdir = false;
    const auto differences = shapeDifferences(requested, shape->shape, compared);
    if (!differences.empty())
        throw Error(fmt::format(
            "SandboxWarmPool {} in {} does not match this run: {}; drop {} to run on its pods "
            "as they are, or take another pool (rossoctl sandbox pool list -n {})",
            name, ns, joinedNames(differences),
            differences.size() == 1 ? "that flag" : "those flags", ns));
    NamedWarmPool named;
    named.shape = requested;
    const auto take = [](bool flagGiven, std::string& field, const std::string& pools) {
        if (!flagGiven && !pools.empty()) field = pools;
    };
    take(given.image, named.shape.image, shape->shape.image);
    take(given.cpu, named.shape.cpu, shape->shape.cpu);
    take(given.memory, named.shape.memory, shape->shape.memory);
    take(given.workdir, named.shape.workdir, shape->shape.workdir);
    if (!given.runtimeClass) named.shape.runtimeClass = shape->shape.runtimeClass;
    // What the template gives goes where the flags' values go (exec arguments, messages): held
    // to the flags' rules.
    try {
        validateRunPodShape(named.shape);
    } catch (const UsageError& error) {
        throw Error(fmt::format(
            "SandboxWarmPool {} in {}: its template (SandboxTemplate {}) gives what a run cannot "
            "use: {}; give that flag yourself, or take another pool",
            name, ns, templateName, shown(error.what())));
    }
    // The run's files go to the work dir: on a pod made from someone else's template it must be
    // a volume (the image's own directories may be read-only or shared with what it ships).
    const auto& mounts = shape->mounts;
    if (std::find(mounts.begin(), mounts.end(), named.shape.workdir) == mounts.end())
        throw Error(fmt::format(
            "SandboxWarmPool {} in {}: its pods mount nothing at {}, where the run's files go; "
            "{}",
            name, ns, named.shape.workdir,
            mounts.empty() ? "mount an emptyDir in its template (SandboxTemplate " + templateName +
                                 ") and give that path as --workdir"
                           : "give --workdir one of its mounts: " + listed(mounts)));
    named.container = shape->container;
    named.ours = warmPoolWrittenByRossoctl(pool, named.shape);
    named.pool = pool;
    return named;
}

std::optional<WarmPoolStatus> reconcileNamedWarmPool(kube::Client& client, const std::string& ns,
                                                     const std::string& name, RunPodShape& shape,
                                                     const ShapeFlags& given, int size,
                                                     long lifetimeSeconds) {
    const auto pool = client.getIfExists(sandboxWarmPools(), ns, name);
    if (pool && !writtenBySandboxPool(*pool))
        throw Error(fmt::format(
            "SandboxWarmPool {} in {} was not made by rossoctl sandbox pool: it is left alone; "
            "give this pool another name (to resize that one: kubectl -n {} scale "
            "sandboxwarmpool {} --replicas N)",
            name, ns, ns, name));
    const auto object = client.getIfExists(sandboxTemplates(), ns, name);
    if (object && !writtenBySandboxPool(*object))
        throw Error(fmt::format(
            "SandboxTemplate {} in {} was not made by rossoctl sandbox pool: it is left alone; "
            "give this pool another name",
            name, ns));
    if (size == 0) {
        if (!pool && !object) return std::nullopt;
        if (pool) removeIfThere(client, sandboxWarmPools(), ns, name, *pool);
        if (object) removeIfThere(client, sandboxTemplates(), ns, name, *object);
        return WarmPoolStatus{};
    }
    // A resize keeps the pool's shape: a changed image would leave its spares on the old one.
    if (const auto have = pool ? recordedShape(*pool) : std::nullopt) {
        const auto differences = shapeDifferences(shape, *have, given);
        if (!differences.empty())
            throw Error(fmt::format(
                "SandboxWarmPool {} in {} keeps another shape: {}; drop {} to resize it, or empty "
                "it first (--size 0) to change its shape",
                name, ns, joinedNames(differences),
                differences.size() == 1 ? "that flag" : "those flags"));
        shape = *have;
    }
    kube::WriteOptions apply;
    apply.force = true;  // checked above: rossoctl's own objects
    client.apply(
        sandboxTemplates(), ns,
        sandboxTemplateManifest(shape, lifetimeSeconds, name, projectGateImage(client, ns)), apply);
    return warmPoolStatus(
        client.apply(sandboxWarmPools(), ns, sandboxWarmPoolManifest(shape, size, name), apply));
}

}  // namespace rossoctl::app::run
