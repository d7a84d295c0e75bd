#include "rossoctl/kube/discovery.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "kube_fakes.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::ClientFixture;

namespace {

const char* kBothVersions =
    R"({"kind":"APIGroup","apiVersion":"v1","name":"agents.x-k8s.io",
        "versions":[{"groupVersion":"agents.x-k8s.io/v1beta1","version":"v1beta1"},
                    {"groupVersion":"agents.x-k8s.io/v1alpha1","version":"v1alpha1"}],
        "preferredVersion":{"groupVersion":"agents.x-k8s.io/v1beta1","version":"v1beta1"}})";
const char* kAlphaOnly =
    R"({"kind":"APIGroup","apiVersion":"v1","name":"agents.x-k8s.io",
        "versions":[{"groupVersion":"agents.x-k8s.io/v1alpha1","version":"v1alpha1"}],
        "preferredVersion":{"groupVersion":"agents.x-k8s.io/v1alpha1","version":"v1alpha1"}})";

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "discoveryXXXXXX").string();
        path = mkdtemp(pattern.data());
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string path;
};

mode_t modeOf(const std::string& path) {
    struct stat info {};
    REQUIRE(stat(path.c_str(), &info) == 0);
    return info.st_mode & 0777;
}

}  // namespace

TEST_CASE("sandboxes() prefers v1beta1 and falls back to v1alpha1", "[discovery]") {
    ClientFixture fixture;
    SECTION("both served") {
        fixture.server.reply(200, kBothVersions);
        Discovery discovery(*fixture.client, fixture.clock, "");
        CHECK(discovery.sandboxes().version == "v1beta1");
    }
    SECTION("only v1alpha1") {
        fixture.server.reply(200, kAlphaOnly);
        Discovery discovery(*fixture.client, fixture.clock, "");
        ResourceRef ref = discovery.sandboxes();
        CHECK(ref.version == "v1alpha1");
        CHECK(ref.group == "agents.x-k8s.io");
        CHECK(ref.kind == "Sandbox");
    }
    CHECK(fixture.server.last().url == "https://api.test:6443/apis/agents.x-k8s.io");
}

TEST_CASE("a group answering 404 is not served", "[discovery]") {
    ClientFixture fixture;
    fixture.server.reply(404, "");
    Discovery discovery(*fixture.client, fixture.clock, "");
    CHECK_THROWS_WITH(discovery.sandboxes(),
                      "the agents.x-k8s.io API is not served by this "
                      "cluster; install agent-sandbox");
    CHECK_FALSE(discovery.isServed("agents.x-k8s.io"));
    CHECK(fixture.server.requests.size() == 1);
}

TEST_CASE("other discovery errors are not mistaken for 'not served'", "[discovery]") {
    ClientFixture fixture;
    fixture.server.reply(403,
                         R"({"kind":"Status","code":403,"reason":"Forbidden","message":"no"})");
    Discovery discovery(*fixture.client, fixture.clock, "");
    CHECK_THROWS_AS(discovery.group("cilium.io"), ApiError);
}

TEST_CASE("pickVersion takes the first wanted version that is served", "[discovery]") {
    ClientFixture fixture;
    fixture.server.reply(200, kBothVersions);
    Discovery discovery(*fixture.client, fixture.clock, "");
    CHECK(discovery.pickVersion("agents.x-k8s.io", {"v1", "v1alpha1"}) == "v1alpha1");
    CHECK_FALSE(discovery.pickVersion("agents.x-k8s.io", {"v2"}).has_value());
    CHECK(fixture.server.requests.size() == 1);
}

TEST_CASE("the disk cache: miss, hit, expiry, private files", "[discovery]") {
    TempDir temp;
    const std::string dir = temp.path + "/cache/rossoctl/discovery/api.test_6443";
    ClientFixture fixture;

    fixture.server.reply(200, kBothVersions);
    Discovery(*fixture.client, fixture.clock, dir).group("agents.x-k8s.io");
    CHECK(fixture.server.requests.size() == 1);
    const std::string file = dir + "/agents.x-k8s.io.json";
    CHECK(modeOf(file) == 0600);
    CHECK(modeOf(dir) == 0700);
    CHECK(modeOf(temp.path + "/cache/rossoctl") == 0700);

    fixture.clock.advance(std::chrono::minutes(9));
    auto cached = Discovery(*fixture.client, fixture.clock, dir).group("agents.x-k8s.io");
    REQUIRE(cached.has_value());
    CHECK(cached->preferredVersion == "v1beta1");
    CHECK(fixture.server.requests.size() == 1);

    fixture.clock.advance(std::chrono::minutes(2));
    fixture.server.reply(200, kAlphaOnly);
    auto refreshed = Discovery(*fixture.client, fixture.clock, dir).group("agents.x-k8s.io");
    CHECK(fixture.server.requests.size() == 2);
    CHECK(refreshed->versions == std::vector<std::string>{"v1alpha1"});
    CHECK(modeOf(file) == 0600);
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        CHECK(entry.path().filename() == "agents.x-k8s.io.json");  // no temp files left
    }
}

TEST_CASE("'not served' is not cached on disk", "[discovery]") {
    TempDir temp;
    ClientFixture fixture;
    fixture.server.reply(404, "");
    Discovery(*fixture.client, fixture.clock, temp.path).group("cilium.io");
    fixture.server.reply(200, R"({"versions":[{"version":"v2"}]})");
    CHECK(Discovery(*fixture.client, fixture.clock, temp.path).isServed("cilium.io"));
    CHECK(fixture.server.requests.size() == 2);
}

TEST_CASE("a corrupt cache file is a miss", "[discovery]") {
    TempDir temp;
    ClientFixture fixture;
    {
        std::FILE* file = std::fopen((temp.path + "/k8s.ovn.org.json").c_str(), "w");
        std::fputs("{not json", file);
        std::fclose(file);
    }
    fixture.server.reply(200, R"({"versions":[{"version":"v1"}]})");
    CHECK(Discovery(*fixture.client, fixture.clock, temp.path).isServed("k8s.ovn.org"));
    CHECK(fixture.server.requests.size() == 1);
}

TEST_CASE("defaultDiscoveryCacheDir: XDG_CACHE_HOME, else ~/.cache, one dir per server",
          "[discovery]") {
    Environment env;
    env.home = "/home/me";
    env.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    CHECK(defaultDiscoveryCacheDir(env, "https://10.0.0.1:6443") ==
          "/home/me/.cache/rossoctl/discovery/10.0.0.1_6443");
    CHECK(defaultDiscoveryCacheDir(env, "https://rancher.example/k8s/clusters/c-1") ==
          "/home/me/.cache/rossoctl/discovery/rancher.example_k8s_clusters_c-1");
    env.getenv = [](const std::string& name) -> std::optional<std::string> {
        if (name == "XDG_CACHE_HOME") return "/xdg";
        return std::nullopt;
    };
    CHECK(defaultDiscoveryCacheDir(env, "https://[::1]:6443") ==
          "/xdg/rossoctl/discovery/___1__6443");
}
