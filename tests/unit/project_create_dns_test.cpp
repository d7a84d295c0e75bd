// Issue 35 point 11: `project create` says when the DNS it allows is a tunnel out (kube-dns
// forwards outside names) or could not be checked, and what closes it; --no-dns says nothing.
#include <catch2/catch.hpp>
#include <sstream>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

const std::string kNamespaces = "/api/v1/namespaces";

// A new project's writes answered; the kube-system/coredns Corefile served when given.
std::string createProject(const std::optional<std::string>& corefile,
                          const std::vector<std::string>& extra = {}) {
    TestHost host;
    host.server.on("GET", kNamespaces + "/team1", 404, testing::kNotFoundBody);
    host.server.on("PATCH", "/*", 201, R"({"metadata":{"resourceVersion":"1"}})");
    json quota = {{"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", "3"}}},
                  {"status", {{"hard", {{"pods", "20"}}}}}};
    host.server.onJson("GET", kNamespaces + "/team1/resourcequotas", 200,
                       {{"kind", "List"},
                        {"metadata", {{"resourceVersion", "10"}}},
                        {"items", json::array({quota})}});
    if (corefile)
        host.server.onJson(
            "GET", kNamespaces + "/kube-system/configmaps/coredns", 200,
            {{"metadata", {{"name", "coredns"}}}, {"data", {{"Corefile", *corefile}}}});
    std::vector<std::string> args{"project", "create", "team1", "--no-check"};
    args.insert(args.end(), extra.begin(), extra.end());
    INFO(host.err.str());
    REQUIRE(host.run(args) == 0);
    for (const auto& sent : host.server.sent())
        if (sent.find("kube-system") != std::string::npos) CHECK_FALSE(sent.rfind("GET ", 0));
    return host.err.str();
}

size_t lines(const std::string& text, const std::string& part) {
    size_t count = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) count += line.find(part) != std::string::npos;
    return count;
}

}  // namespace

TEST_CASE("project create warns once when kube-dns forwards outside names",
          "[project][command][cluster-dns]") {
    const std::string stock =
        ".:53 {\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n"
        "    forward . /etc/resolv.conf\n    cache 30\n}\n";
    const auto err = createProject(stock);
    CHECK(lines(err, "Warning: the cluster DNS") == 1);
    CHECK_THAT(err, Catch::Contains(
                        "Warning: the cluster DNS resolves outside names (kube-system/coredns: "
                        "forward . /etc/resolv.conf), so pods of team1 allowed DNS can tunnel "
                        "data out through kube-dns and `sandbox verify` fails egress; --no-dns "
                        "closes it\n"));
    CHECK(createProject(stock, {"--no-dns"}).find("cluster DNS") == std::string::npos);
    // Cluster names only: nothing to say.
    CHECK(createProject(".:53 {\n    kubernetes cluster.local\n    cache 30\n}\n")
              .find("cluster DNS") == std::string::npos);
}

TEST_CASE("project create says when the cluster DNS could not be checked",
          "[project][command][cluster-dns]") {
    const auto err = createProject(std::nullopt);
    CHECK(lines(err, "Warning: the cluster DNS") == 1);
    CHECK_THAT(err, Catch::Contains("Warning: the cluster DNS could not be checked "
                                    "(kube-system/coredns: not found"));
    CHECK_THAT(err, Catch::Contains("--no-dns closes it\n"));
    CHECK_THAT(createProject(".:53 {\n    import /etc/coredns/custom/*.override\n}\n"),
               Catch::Contains("could not be checked (kube-system/coredns: import "
                               "/etc/coredns/custom/*.override not readable)"));
}
