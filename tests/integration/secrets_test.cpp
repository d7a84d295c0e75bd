// No secret is ever printed, whatever the verbosity; the discovery cache is private; TLS is
// verified unless the user turns it off, and a failed verification is one clear line.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "fault_server.hpp"
#include "harness.hpp"

namespace {

const std::string kToken = "rossoctl-test-token-7f3a9c51d2";
const std::string kExecToken = "exec-plugin-token-5b2e88a0c4";
const char* const kBegin =
    "BEGIN"
    " PRIVATE";
const char* const kPrivateKey =
    "PRIVATE"
    " KEY-----";

std::string readFile(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// A kubeconfig field's value (std::regex would recurse itself to death on long base64).
std::string field(const std::string& kubeconfig, const std::string& name) {
    const std::string key = name + ": ";
    size_t at = kubeconfig.find(key);
    if (at == std::string::npos) return "";
    at += key.size();
    return kubeconfig.substr(at, kubeconfig.find_first_of(" \n", at) - at);
}

std::string kubeconfigFor(const std::string& server, const std::string& caData,
                          const std::string& user, const std::string& extraCluster = "") {
    return "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
           "clusters:\n- name: test\n  cluster:\n    server: " +
           server + "\n    certificate-authority-data: " + caData + "\n" + extraCluster +
           "contexts:\n- name: test\n  context: {cluster: test, user: test}\n"
           "users:\n- name: test\n  user:\n" +
           user;
}

// Every string that must never appear in what rossoctl prints.
void checkNoSecrets(const harness::RunResult& result, const std::vector<std::string>& secrets) {
    for (const std::string* stream : {&result.out, &result.err}) {
        for (const auto& secret : secrets) {
            INFO("leaked " << secret.substr(0, 12) << "...");
            CHECK(stream->find(secret) == std::string::npos);
        }
        // Split so this file does not itself look like a key to secret scanners.
        CHECK(stream->find(kBegin) == std::string::npos);
        CHECK(stream->find(kPrivateKey) == std::string::npos);
    }
}

int mode(const std::string& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return -1;
    return static_cast<int>(info.st_mode & 07777);
}

}  // namespace

TEST_CASE("-v 8 never prints a token, a client key or an exec plugin's token", "[secrets]") {
    harness::TestNamespace ns("secrets", true,
                              {{"pod-security.kubernetes.io/enforce", "restricted"}});
    harness::FaultApiserver front;
    const std::string admin = readFile(harness::kubeconfigPath());
    const std::string caData = field(admin, "certificate-authority-data");
    const std::string keyData = field(admin, "client-key-data");
    REQUIRE_FALSE(keyData.empty());
    const std::string keyPem = readFile(harness::clusterDir() + "/pki/admin.key");
    // A line from the middle of the PEM key, as a decoded leak would show it.
    std::istringstream keyLines(keyPem);
    std::string keyLine;
    for (int i = 0; i < 3; ++i) std::getline(keyLines, keyLine);
    const std::string server = "https://127.0.0.1:" + std::to_string(front.port());

    const std::string plugin = harness::writeTempFile(
        "credential-plugin",
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
        "\"ExecCredential\",\"status\":{\"token\":\"" +
            kExecToken + "\"}}'\n",
        0700);
    const std::map<std::string, std::string> kubeconfigs = {
        {"token", harness::writeTempFile("token.kubeconfig",
                                         kubeconfigFor(server, caData, "    token: " + kToken))},
        {"client key", harness::kubeconfigPath()},
        {"exec plugin",
         harness::writeTempFile(
             "exec.kubeconfig",
             kubeconfigFor(server, caData,
                           "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                           "      command: " +
                               plugin + "\n      interactiveMode: Never\n"))}};
    const std::vector<std::string> secrets = {kToken, kExecToken, keyData, keyLine};
    const std::vector<std::vector<std::string>> commands = {
        {"version"},
        {"sandbox", "list", "-n", ns.name()},
        {"agents", "list", "-n", ns.name()},
        {"sandbox", "get", "absent", "-n", ns.name()},
        {"project", "describe", ns.name()},
        {"agents", "import", "from-image", "--name", "orders", "--containerImage", "busybox",
         "--envVar", "GREETING=hello", "--dry-run=server", "-n", ns.name()},
    };
    for (const auto& [kind, kubeconfig] : kubeconfigs) {
        for (const auto& command : commands) {
            for (const char* level : {"8", "10"}) {
                std::vector<std::string> args{"--kubeconfig", kubeconfig, "-v", level};
                args.insert(args.end(), command.begin(), command.end());
                auto result = harness::rossoctl(args, {}, {}, 60);
                std::string line;
                for (const auto& word : command) line += word + " ";
                INFO(kind << ": " << line << "-v " << level << " exit " << result.exitCode);
                // It really talked to the server, so the traces were really written.
                CHECK(result.err.find("GET https://") != std::string::npos);
                if (kind != "client key")
                    CHECK(result.err.find("Authorization") != std::string::npos);
                checkNoSecrets(result, secrets);
            }
        }
    }
    CHECK(front.count({"GET"}) > 0);
}

TEST_CASE("the discovery cache is 0600 files in 0700 directories", "[secrets]") {
    const std::string home = harness::writeTempFile("home-marker", "");
    const std::string homeDir = home.substr(0, home.rfind('/'));
    auto result = harness::rossoctl({"sandbox", "list", "-A"}, {},
                                    {{"HOME", homeDir}, {"XDG_CACHE_HOME", ""}});
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
    auto listing = harness::run({"find", homeDir + "/.cache/rossoctl", "-printf", "%y %m %p\n"});
    INFO(listing.out);
    size_t files = 0;
    std::istringstream lines(listing.out);
    for (std::string type, perms, path; lines >> type >> perms >> path;) {
        INFO(path);
        if (type == "d") CHECK(perms == "700");
        if (type == "f") {
            CHECK(perms == "600");
            ++files;
        }
    }
    CHECK(files > 0);
    CHECK(mode(homeDir + "/.cache") != -1);
}

TEST_CASE("TLS is verified: a wrong CA or a wrong server name fails with one clear line",
          "[secrets]") {
    const std::string otherCa = harness::writeTempFile("other-ca.crt", "");
    auto made = harness::run({"sh", "-c",
                              "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other "
                              "-keyout /dev/null -out '" +
                                  otherCa + "' 2>/dev/null"});
    REQUIRE(made.exitCode == 0);
    const std::string admin = readFile(harness::kubeconfigPath());
    const std::string server = field(admin, "server");
    const std::string userBlock =
        "    client-certificate-data: " + field(admin, "client-certificate-data") +
        "\n    client-key-data: " + field(admin, "client-key-data") + "\n";
    auto oneLine = [](const std::string& text) {
        return std::count(text.begin(), text.end(), '\n') == 1;
    };

    SECTION("a CA that did not sign the server's certificate") {
        auto result = harness::rossoctl({"--kubeconfig", harness::kubeconfigPath(),
                                         "--certificate-authority", otherCa, "version"});
        INFO(result.err);
        CHECK(result.exitCode == 1);
        CHECK(oneLine(result.err));
        CHECK(result.err.find("certificate") != std::string::npos);
    }
    SECTION("no CA at all: the system roots do not trust a private cluster") {
        auto result = harness::rossoctl({"-s", server, "--token", kToken, "version"}, {},
                                        {{"KUBECONFIG", "/dev/null"}});
        INFO(result.err);
        CHECK(result.exitCode == 1);
        CHECK(oneLine(result.err));
        CHECK(result.err.find("certificate") != std::string::npos);
        CHECK(result.err.find(kToken) == std::string::npos);
    }
    SECTION("tls-server-name that the certificate does not name") {
        const std::string kubeconfig = harness::writeTempFile(
            "sni.kubeconfig", kubeconfigFor(server, field(admin, "certificate-authority-data"),
                                            userBlock, "    tls-server-name: wrong.example.com\n"));
        auto result = harness::rossoctl({"--kubeconfig", kubeconfig, "version"});
        INFO(result.err);
        CHECK(result.exitCode == 1);
        CHECK(oneLine(result.err));
        CHECK(result.err.find("wrong.example.com") != std::string::npos);
    }
    SECTION("--insecure-skip-tls-verify is the only way past it, and it is explicit") {
        auto result = harness::rossoctl(
            {"-s", server, "--insecure-skip-tls-verify", "--token", kToken, "version"}, {},
            {{"KUBECONFIG", "/dev/null"}});
        INFO(result.err);
        // Verification is off, so TLS succeeds; the made-up token is then refused (401).
        CHECK(result.err.find("certificate") == std::string::npos);
        CHECK(result.err.find(kToken) == std::string::npos);
    }
}
