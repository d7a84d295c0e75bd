// The image-provenance boundary: what each container of the pod runs, by digest or by a tag
// that may move, from which registry; and the digest the kubelet reports it ran.
#include "rossoctl/verify/image_provenance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "rossoctl/model/project.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/probe_site.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

std::string text(const json& object, const char* key) {
    if (!object.is_object()) return "";
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const json& items(const json& object, const char* key) {
    static const json none = json::array();
    if (!object.is_object()) return none;
    const auto it = object.find(key);
    return it != object.end() && it->is_array() ? *it : none;
}

// The "sha256:<64 hex>" in text, or "".
std::string digestIn(const std::string& value) {
    const auto at = value.find("sha256:");
    if (at == std::string::npos || value.size() < at + 7 + 64) return "";
    const std::string hex = value.substr(at + 7, 64);
    if (!std::all_of(hex.begin(), hex.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
        return "";
    return "sha256:" + hex;
}

struct Container {
    std::string who;  // "container agent"
    std::string name;
    std::string image;
};

// A probe an earlier verify left, ended: it never runs again, and no pod can remove it, so its
// tag would fail every later run until the pod is made anew (attack 67 F1). Anything else
// shaped otherwise, or still able to run, is judged.
bool endedEarlierProbe(const json& pod, const json& container, const std::string& probeImage) {
    return ephemeralContainerEnded(pod, text(container, "name")) &&
           isTrustedProbeContainer(container, probeImage);
}

std::vector<Container> containersOf(const json& pod, const std::string& probeImage) {
    std::vector<Container> out;
    const json spec = pod.is_object() ? pod.value("spec", json::object()) : json::object();
    for (const auto& [key, label] :
         {std::pair{"initContainers", "init container"}, std::pair{"containers", "container"},
          std::pair{"ephemeralContainers", "ephemeral container"}})
        for (const auto& container : items(spec, key))
            if (std::string_view(key) != "ephemeralContainers" ||
                !endedEarlierProbe(pod, container, probeImage))
                out.push_back({std::string(label) + " " + text(container, "name"),
                               text(container, "name"), text(container, "image")});
    return out;
}

// What the pod's `image` volumes mount (attack 57, I2): an image's files in a container, as
// much its code as a container's own image.
std::vector<Container> imageVolumesOf(const json& pod) {
    std::vector<Container> out;
    const json spec = pod.is_object() ? pod.value("spec", json::object()) : json::object();
    for (const auto& volume : items(spec, "volumes"))
        if (volume.is_object() && volume.contains("image"))
            out.push_back({"image volume " + text(volume, "name"), text(volume, "name"),
                           text(volume["image"], "reference")});
    return out;
}

std::string listed(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& value : values) out += (out.empty() ? "" : ", ") + value;
    return out;
}

}  // namespace

ImageReference parseImageReference(const std::string& image) {
    ImageReference out;
    std::string rest = image;
    if (const auto at = rest.find('@'); at != std::string::npos) {
        out.digest = rest.substr(at + 1);
        rest = rest.substr(0, at);
    }
    const auto slash = rest.find('/');
    const std::string first = slash == std::string::npos ? "" : rest.substr(0, slash);
    // A capital letter marks a host too, as newer runtimes' parsers read it (no repository
    // has one): "EVIL/library/python" is not Docker Hub's (attack 67, read).
    if (!first.empty() && (first.find('.') != std::string::npos ||
                           first.find(':') != std::string::npos || first == "localhost" ||
                           std::any_of(first.begin(), first.end(),
                                       [](unsigned char c) { return std::isupper(c) != 0; }))) {
        // Docker Hub's other names, as the kubelet may report an image it ran.
        out.registry =
            first == "index.docker.io" || first == "registry-1.docker.io" ? "docker.io" : first;
        rest = rest.substr(slash + 1);
    } else {
        out.registry = "docker.io";
    }
    if (out.registry == "docker.io" && rest.find('/') == std::string::npos)
        rest = "library/" + rest;
    const auto colon = rest.rfind(':');
    if (colon != std::string::npos && rest.find('/', colon) == std::string::npos) {
        out.tag = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
    } else if (out.digest.empty()) {
        out.tag = "latest";
    }
    out.repository = rest;
    return out;
}

std::optional<std::vector<std::string>> allowedRegistries(const json& namespaceObject) {
    const json metadata = namespaceObject.is_object()
                              ? namespaceObject.value("metadata", json::object())
                              : json::object();
    const json annotations =
        metadata.is_object() ? metadata.value("annotations", json::object()) : json::object();
    const std::string value = text(annotations, model::kAllowedRegistriesAnnotation);
    if (value.empty()) return std::nullopt;
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= value.size()) {
        const auto comma = value.find(',', start);
        const std::string entry =
            value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!entry.empty()) out.push_back(entry);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

bool registryAllowed(const ImageReference& image, const std::vector<std::string>& allowed) {
    const std::string full = image.registry + "/" + image.repository;
    for (std::string entry : allowed) {
        // Spelled as parseImageReference spells images: Docker Hub's names, its library.
        const auto slash = entry.find('/');
        const std::string host = entry.substr(0, slash);
        if (host == "index.docker.io" || host == "registry-1.docker.io")
            entry = "docker.io" + (slash == std::string::npos ? "" : entry.substr(slash));
        // "docker.io/busybox": an organisation's images, or the library's image busybox.
        std::vector<std::string> readings{entry};
        if (entry.rfind("docker.io/", 0) == 0 && entry.size() > 10 &&
            entry.find('/', 10) == std::string::npos)
            readings.push_back("docker.io/library/" + entry.substr(10));
        for (const auto& reading : readings)
            if (reading == image.registry || full == reading || full.rfind(reading + "/", 0) == 0)
                return true;
    }
    return false;
}

Finding imageProvenanceStatic(const json& pod,
                              const std::optional<std::vector<std::string>>& allowed,
                              const std::string& probeImage) {
    Finding finding{Verdict::Pass, {}, ""};
    auto judged = containersOf(pod, probeImage);
    for (auto& volume : imageVolumesOf(pod)) judged.push_back(std::move(volume));
    const json spec = pod.is_object() ? pod.value("spec", json::object()) : json::object();
    for (const auto& container : items(spec, "ephemeralContainers"))
        if (endedEarlierProbe(pod, container, probeImage))
            finding.evidence.push_back(fmt::format(
                "ephemeral container {}: an earlier verify's trusted probe, ended (it never "
                "runs again): not judged",
                text(container, "name")));
    for (const auto& container : judged) {
        const ImageReference image = parseImageReference(container.image);
        const std::string pinned = digestIn(image.digest);
        if (pinned.empty()) {
            finding.verdict = Verdict::Fail;
            finding.evidence.push_back(fmt::format(
                "{}: image {} is the mutable tag {}: what runs may change under the same name",
                container.who, container.image, image.tag.empty() ? "latest" : image.tag));
        } else {
            finding.evidence.push_back(
                fmt::format("{}: image {} pinned by digest", container.who, container.image));
        }
        if (allowed && !registryAllowed(image, *allowed)) {
            finding.verdict = Verdict::Fail;
            finding.evidence.push_back(fmt::format(
                "{}: image {} is from {}, not a registry the project allows ({})", container.who,
                container.image, image.registry + "/" + image.repository, listed(*allowed)));
        }
    }
    finding.evidence.push_back(
        allowed ? fmt::format("the project allows the registries {}", listed(*allowed))
                : fmt::format("the project sets no allowed registries (project create "
                              "--allow-registry, namespace annotation {}): reported, not judged",
                              model::kAllowedRegistriesAnnotation));
    return finding;
}

Finding imageProvenanceLive(const json& pod, const std::optional<std::vector<std::string>>& allowed,
                            const std::string& probeImage) {
    Finding finding{Verdict::Pass, {}, "kubelet"};
    auto doubt = [&](std::string line) {
        if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(std::move(line));
    };
    const json status = pod.is_object() ? pod.value("status", json::object()) : json::object();
    std::vector<json> statuses;
    for (const char* key :
         {"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"})
        for (const auto& entry : items(status, key)) statuses.push_back(entry);
    for (const auto& container : containersOf(pod, probeImage)) {
        const auto found = std::find_if(statuses.begin(), statuses.end(), [&](const json& entry) {
            return text(entry, "name") == container.name;
        });
        if (found == statuses.end()) {
            doubt(container.who + ": the node reports no status, so no image it ran");
            continue;
        }
        const std::string imageId = text(*found, "imageID");
        const std::string ran = digestIn(imageId);
        const std::string pinned = digestIn(parseImageReference(container.image).digest);
        if (ran.empty()) {
            doubt(fmt::format("{}: the node reports imageID {:?}, with no digest", container.who,
                              imageId));
        } else if (!pinned.empty() && ran != pinned) {
            finding.verdict = Verdict::Fail;
            finding.evidence.push_back(
                fmt::format("{}: the node ran {}, not the pinned {}", container.who, ran, pinned));
        } else {
            finding.evidence.push_back(
                fmt::format("{}: the node ran {} ({})", container.who, ran, imageId));
            if (allowed && !registryAllowed(parseImageReference(imageId), *allowed)) {
                finding.verdict = Verdict::Fail;
                finding.evidence.push_back(fmt::format(
                    "{}: the node pulled it as {}, not from a registry the project allows",
                    container.who, imageId));
            }
        }
    }
    return finding;
}

}  // namespace rossoctl::verify
