// Issue 35 point 11 on the local cluster: a CoreDNS that forwards outside names makes DNS a
// tunnel out, so the hardened sandbox of a project with DNS allowed fails egress; restored, it
// passes. It changes kube-system/coredns, a cluster-wide object: [outage], run alone.
#include <catch2/catch.hpp>
#include <chrono>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"

using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

const std::string kSystem = "kube-system";

std::string corefileNow() {
    return harness::admin()
        .get(resources::configMaps(), kSystem, "coredns")["data"]["Corefile"]
        .get<std::string>();
}

void setCorefile(const std::string& corefile) {
    harness::admin().patch(resources::configMaps(), kSystem, "coredns",
                           rossoctl::kube::PatchType::Merge,
                           json{{"data", {{"Corefile", corefile}}}}.dump());
}

// kube-system/coredns's Corefile with a forward of "." in its ".:53" block while the guard
// lives; the old text put back on every path out (the reload plugin cannot load the forward,
// which this CoreDNS lacks, so the running server keeps answering cluster names only).
class ForwardingCorefile {
  public:
    explicit ForwardingCorefile(const std::string& upstream) : original_(corefileNow()) {
        const auto block = original_.find(".:53 {");
        REQUIRE(block != std::string::npos);
        const auto close = original_.find("\n}", block);
        REQUIRE(close != std::string::npos);
        std::string patched = original_;
        patched.insert(close + 1, "    forward . " + upstream + "\n");
        setCorefile(patched);
    }
    ~ForwardingCorefile() {
        try {
            setCorefile(original_);
        } catch (const std::exception& error) {
            WARN("kube-system/coredns not restored: " << error.what());
        }
    }
    ForwardingCorefile(const ForwardingCorefile&) = delete;
    ForwardingCorefile& operator=(const ForwardingCorefile&) = delete;

  private:
    std::string original_;
};

struct Verified {
    int exitCode = -1;
    json egress;
    std::string evidence;  // the egress check's, static and live
};

Verified verify(const std::string& ns, const std::string& name,
                const std::vector<std::string>& extra) {
    std::vector<std::string> args{"sandbox",
                                  "verify",
                                  name,
                                  "-n",
                                  ns,
                                  "--egress-target",
                                  harness::outsideUrl(),
                                  "--trusted-probe",
                                  "curlimages/curl:8",
                                  "-o",
                                  "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = harness::rossoctl(args, {}, {}, 300);
    INFO(result.out << result.err);
    Verified verified{result.exitCode, json(), ""};
    const json report = json::parse(result.out, nullptr, false);
    REQUIRE(report.is_object());
    for (const auto& check : report["checks"])
        if (check["id"] == "egress") verified.egress = check;
    REQUIRE(verified.egress.is_object());
    for (const char* part : {"static", "live"})
        for (const auto& line : verified.egress[part]["evidence"])
            verified.evidence += line.get<std::string>() + "\n";
    return verified;
}

}  // namespace

TEST_CASE("sandbox verify: a cluster DNS that forwards outside names fails egress",
          "[outage][verify-dns]") {
    harness::TestNamespace project("verify35-dns", false);
    const std::string ns = project.name();
    {
        const auto created = harness::rossoctl({"project", "create", ns, "--no-check"});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
        CHECK(created.err.find("cluster DNS") == std::string::npos);  // cluster names only
    }
    harness::admin().create(resources::sandboxes("v1beta1"), ns,
                            harness::smallSandbox(ns, "hardened"));
    REQUIRE(harness::eventually(
        [&] {
            const auto box =
                harness::admin().getIfExists(resources::sandboxes("v1beta1"), ns, "hardened");
            return box && rossoctl::model::sandboxReady(*box);
        },
        180));
    {
        ForwardingCorefile forwarding("10.251.0.1");
        const auto recreated = harness::rossoctl({"project", "create", ns, "--no-check"});
        INFO(recreated.out << recreated.err);
        CHECK(recreated.exitCode == 0);
        CHECK_THAT(recreated.err, Catch::Contains("Warning: the cluster DNS resolves outside names "
                                                  "(kube-system/coredns: forward . 10.251.0.1)"));
        const auto tunnel = verify(ns, "hardened", {"--no-restart"});
        INFO(tunnel.evidence);
        CHECK(tunnel.exitCode == 3);
        CHECK(tunnel.egress["result"] == "fail");
        CHECK(tunnel.egress["static"]["result"] == "fail");
        CHECK_THAT(tunnel.evidence,
                   Catch::Contains("kube-system/coredns Corefile, block .: forward . 10.251.0.1: "
                                   "DNS to kube-dns resolves outside names (a tunnel out)"));
    }
    CHECK(corefileNow().find("forward") == std::string::npos);
    const auto restored = verify(ns, "hardened", {});
    INFO(restored.evidence);
    CHECK(restored.exitCode == 0);
    CHECK(restored.egress["result"] == "pass");
    CHECK_THAT(restored.evidence, Catch::Contains("DNS to kube-dns does not recurse"));
}
