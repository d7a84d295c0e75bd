// The image-provenance boundary of sandbox verify: references parsed as the container runtimes
// read them, tags and registries against the project's list, the digest the kubelet reports.
#include <catch2/catch.hpp>

#include "rossoctl/model/project.hpp"
#include "rossoctl/verify/image_provenance.hpp"
#include "rossoctl/verify/probe_site.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using namespace rossoctl::verify;
using nlohmann::json;

namespace {

const std::string kDigest =
    "sha256:4ff3ca91275773af45cb4b0834e12b7eb47d1c18f770a0b151381cd227f4c253";

json podWith(const std::string& image, const std::string& imageId) {
    json pod = {{"metadata", {{"name", "orders"}}},
                {"spec", {{"containers", json::array({{{"name", "agent"}, {"image", image}}})}}},
                {"status", {{"containerStatuses", json::array()}}}};
    if (!imageId.empty())
        pod["status"]["containerStatuses"].push_back({{"name", "agent"}, {"imageID", imageId}});
    return pod;
}

bool says(const Finding& finding, const std::string& text) {
    for (const auto& line : finding.evidence)
        if (line.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("image references are read as container runtimes read them", "[verify][provenance]") {
    auto ref = [](const std::string& image) {
        const auto parsed = parseImageReference(image);
        return parsed.registry + "|" + parsed.repository + "|" + parsed.tag + "|" + parsed.digest;
    };
    CHECK(ref("busybox") == "docker.io|library/busybox|latest|");
    CHECK(ref("python:3.12-slim") == "docker.io|library/python|3.12-slim|");
    CHECK(ref("curlimages/curl:8") == "docker.io|curlimages/curl|8|");
    CHECK(ref("gcr.io/distroless/static:nonroot") == "gcr.io|distroless/static|nonroot|");
    CHECK(ref("localhost:5000/agent@" + kDigest) == "localhost:5000|agent||" + kDigest);
    CHECK(ref("registry.example.com:5000/team/agent:v1@" + kDigest) ==
          "registry.example.com:5000|team/agent|v1|" + kDigest);
    // Docker Hub's other names and its library, as the kubelet may report an image it ran.
    CHECK(ref("docker.io/busybox:1.36") == "docker.io|library/busybox|1.36|");
    CHECK(ref("index.docker.io/library/busybox:1.36") == "docker.io|library/busybox|1.36|");
    // A capital letter in the first part names a host (attack 67, read).
    CHECK(ref("EVIL/library/python@" + kDigest) == "EVIL|library/python||" + kDigest);
}

TEST_CASE("--allow-registry entries read Docker Hub's names as images are read",
          "[verify][provenance]") {
    auto allowed = [](const std::string& image, const std::string& entry) {
        return registryAllowed(parseImageReference(image), {entry});
    };
    CHECK(allowed("busybox@" + kDigest, "docker.io"));
    CHECK(allowed("busybox@" + kDigest, "index.docker.io"));
    CHECK(allowed("docker.io/busybox@" + kDigest, "docker.io/busybox"));
    CHECK(allowed("bitnami/redis@" + kDigest, "docker.io/bitnami"));
    CHECK(allowed("bitnami/redis@" + kDigest, "index.docker.io/bitnami"));
    CHECK_FALSE(allowed("bitnami/redis@" + kDigest, "docker.io/busybox"));
    CHECK_FALSE(allowed("ghcr.io/busybox@" + kDigest, "docker.io/busybox"));
}

TEST_CASE("image provenance: a tag fails, a digest from an allowed registry passes",
          "[verify][provenance]") {
    const std::vector<std::string> allowed = {"ghcr.io/team", "docker.io"};
    const Finding tagged = imageProvenanceStatic(podWith("python:3.12-slim", ""), allowed);
    CHECK(tagged.verdict == Verdict::Fail);
    CHECK(says(tagged, "container agent: image python:3.12-slim is the mutable tag 3.12-slim"));
    const Finding pinned =
        imageProvenanceStatic(podWith("ghcr.io/team/agent@" + kDigest, ""), allowed);
    CHECK(pinned.verdict == Verdict::Pass);
    const Finding foreign =
        imageProvenanceStatic(podWith("ghcr.io/other/agent@" + kDigest, ""), allowed);
    CHECK(foreign.verdict == Verdict::Fail);
    CHECK(says(foreign,
               "is from ghcr.io/other/agent, not a registry the project allows "
               "(ghcr.io/team, docker.io)"));
    CHECK(
        says(imageProvenanceStatic(podWith("busybox", ""), std::nullopt), "reported, not judged"));
}

TEST_CASE("image provenance live: the digest the kubelet reports it ran", "[verify][provenance]") {
    const std::string image = "docker.io/library/busybox@" + kDigest;
    CHECK(imageProvenanceLive(podWith(image, image), std::nullopt).verdict == Verdict::Pass);
    const std::string other = "docker.io/library/busybox@sha256:" + std::string(64, 'a');
    const Finding swapped = imageProvenanceLive(podWith(image, other), std::nullopt);
    CHECK(swapped.verdict == Verdict::Fail);
    CHECK(says(swapped, "the node ran sha256:aaaa"));
    CHECK(imageProvenanceLive(podWith(image, "rossoctl-local://busybox"), std::nullopt).verdict ==
          Verdict::Unproven);
    CHECK(imageProvenanceLive(podWith(image, ""), std::nullopt).verdict == Verdict::Unproven);
    CHECK(imageProvenanceLive(podWith(image, image), std::vector<std::string>{"quay.io"}).verdict ==
          Verdict::Fail);
}

TEST_CASE("project create --allow-registry records the list that verify reads back",
          "[verify][provenance][project]") {
    model::ProjectOptions options;
    options.name = "team1";
    options.allowRegistries = {"docker.io", "ghcr.io/team"};
    model::validateProjectOptions(options);
    const json ns = model::buildProjectNamespace(options);
    CHECK(ns["metadata"]["annotations"]["rossoctl.dev/allowed-registries"] ==
          "docker.io,ghcr.io/team");
    CHECK(allowedRegistries(ns) == std::vector<std::string>{"docker.io", "ghcr.io/team"});
    CHECK_FALSE(allowedRegistries(json{{"metadata", {{"name", "x"}}}}).has_value());
    testing::checkUsageErrors({
        {"project", "create", "team1", "--allow-registry", "https://docker.io"},
        {"project", "create", "team1", "--allow-registry", "a,b"},
        {"project", "create", "team1", "--allow-registry", "ghcr.io/team/"},
        // The egress gate runs the check image in every sandbox: busybox:1.36 is docker.io's.
        {"project", "create", "team1", "--allow-registry", "ghcr.io/team"},
    });
}

TEST_CASE("project create --allow-registry: the egress gate's image must come from the list",
          "[verify][provenance][project]") {
    testing::TestHost host;
    const int code = host.run({"project", "create", "team1", "--allow-registry", "ghcr.io/team",
                               "--check-image", "quay.io/x/busybox:1"});
    CHECK(code == 2);
    CHECK_THAT(host.err.str(),
               Catch::Contains("--check-image quay.io/x/busybox:1 is not from a registry "
                               "--allow-registry allows (ghcr.io/team)"));
    CHECK(host.sent().empty());
}

TEST_CASE("image provenance: an image volume is judged as a container's image (attack 57 I2)",
          "[verify][provenance][attack57]") {
    const std::vector<std::string> allowed = {"ghcr.io/team"};
    auto withVolume = [](const std::string& reference) {
        json pod = podWith("ghcr.io/team/agent@" + kDigest, "");
        pod["spec"]["volumes"] = json::array(
            {{{"name", "workspace"}, {"emptyDir", json::object()}},
             {{"name", "tools"}, {"image", {{"reference", reference}, {"pullPolicy", "Always"}}}}});
        return pod;
    };
    const Finding tagged = imageProvenanceStatic(withVolume("python:3.12-slim"), allowed);
    CHECK(tagged.verdict == Verdict::Fail);
    CHECK(says(tagged, "image volume tools: image python:3.12-slim is the mutable tag 3.12-slim"));
    CHECK(says(tagged,
               "image volume tools: image python:3.12-slim is from docker.io/library/python"));
    const Finding foreign =
        imageProvenanceStatic(withVolume("quay.io/x/tools@" + kDigest), allowed);
    CHECK(foreign.verdict == Verdict::Fail);
    CHECK(says(foreign, "image volume tools: image quay.io/x/tools@"));
    const Finding pinned =
        imageProvenanceStatic(withVolume("ghcr.io/team/tools@" + kDigest), allowed);
    CHECK(pinned.verdict == Verdict::Pass);
    CHECK(says(pinned, "image volume tools: image ghcr.io/team/tools@" + kDigest + " pinned"));
    // No reference at all: no digest either.
    CHECK(imageProvenanceStatic(withVolume(""), std::nullopt).verdict == Verdict::Fail);
}

TEST_CASE(
    "attack 67 F1: an earlier verify's trusted probe, ended, does not fail a later verify's "
    "provenance",
    "[verify][provenance]") {
    json pod = podWith("python@" + kDigest, "docker.io/library/python@" + kDigest);
    TrustedProbeOptions options;
    options.image = "curlimages/curl:8";
    pod["spec"]["ephemeralContainers"] =
        json::array({trustedProbeContainer("rossoctl-probe-99e9b8", options)});
    const std::vector<std::string> allowed = {"docker.io"};
    for (const char* state : {"running", "terminated"}) {
        pod["status"]["ephemeralContainerStatuses"] =
            json::array({{{"name", "rossoctl-probe-99e9b8"},
                          {"imageID", "docker.io/curlimages/curl@" + kDigest},
                          {"state", {{state, json::object()}}}}});
        const bool ended = std::string(state) == "terminated";
        const Finding judged = imageProvenanceStatic(pod, allowed, "curlimages/curl:8");
        CHECK((judged.verdict == Verdict::Pass) == ended);
        CHECK(says(judged, "an earlier verify's trusted probe, ended") == ended);
    }
    // Of another image than this run's probe: judged (review 68 M2).
    CHECK(imageProvenanceStatic(pod, allowed, "busybox:1.36").verdict == Verdict::Fail);
    CHECK(imageProvenanceStatic(pod, allowed).verdict == Verdict::Fail);
    // Ended, but not shaped as verify writes its probe: judged.
    pod["spec"]["ephemeralContainers"][0]["command"] = json::array({"sh", "-c", "true"});
    CHECK(imageProvenanceStatic(pod, allowed, "curlimages/curl:8").verdict == Verdict::Fail);
}
