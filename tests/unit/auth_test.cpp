#include "rossoctl/kube/auth.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "config_test_support.hpp"
#include "kube_fakes.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::errorOf;
using rossoctl::testing::FakeClock;
using rossoctl::testing::TempDir;

namespace {

constexpr const char* kV1 = "client.authentication.k8s.io/v1";
constexpr const char* kV1beta1 = "client.authentication.k8s.io/v1beta1";

std::string readText(const std::string& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

int lineCount(const std::string& path) {
    std::string text = readText(path);
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A plugin that counts its runs in DIR/runs, saves its input, and replies with a token
// "token-N" (N = run number) that expires at the time written in DIR/expiry.
std::string writeTokenPlugin(const TempDir& dir, const std::string& apiVersion,
                             const std::string& expiration) {
    dir.write("expiry", expiration);
    std::string script =
        "#!/bin/sh\n"
        "echo run >> '" +
        dir.file("runs") +
        "'\n"
        "n=$(wc -l < '" +
        dir.file("runs") +
        "' | tr -d ' ')\n"
        "expiry=$(cat '" +
        dir.file("expiry") +
        "')\n"
        "printf '%s' \"$KUBERNETES_EXEC_INFO\" > '" +
        dir.file("info") +
        "'\n"
        "echo \"mode=$PLUGIN_MODE args=$*\" > '" +
        dir.file("seen") +
        "'\n"
        "echo 'plugin says hello on stderr' >&2\n"
        "cat <<EOF\n"
        "{\"apiVersion\": \"" +
        apiVersion +
        "\", \"kind\": \"ExecCredential\",\n"
        " \"status\": {\"token\": \"token-$n\", \"expirationTimestamp\": \"$expiry\"}}\n"
        "EOF\n";
    return dir.write("plugin.sh", script, 0755);
}

RestConfig execConfig(const std::string& command, const std::string& apiVersion) {
    RestConfig config;
    config.server = "https://api.example:6443";
    config.caData = "CA-PEM";
    ExecConfig exec;
    exec.apiVersion = apiVersion;
    exec.command = command;
    exec.args = {"get-token", "--fast"};
    exec.env = {{"PLUGIN_MODE", "test"}};
    exec.provideClusterInfo = true;
    config.exec = exec;
    return config;
}

// Captures what the process writes to fd 2 (the plugin inherits it) while in scope.
class StderrCapture {
  public:
    explicit StderrCapture(const std::string& path) : saved_(::dup(2)) {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(fd, 2);
        ::close(fd);
    }
    ~StderrCapture() {
        ::dup2(saved_, 2);
        ::close(saved_);
    }

  private:
    int saved_;
};

class RecordingRunner : public ExecPluginRunner {
  public:
    explicit RecordingRunner(std::string reply) : reply_(std::move(reply)) {}
    std::string run(const ExecConfig&, const std::string& execInfo) override {
        ++runs;
        lastInfo = execInfo;
        return reply_;
    }
    int runs = 0;
    std::string lastInfo;

  private:
    std::string reply_;
};

}  // namespace

TEST_CASE("static token and basic auth", "[auth]") {
    FakeClock clock;
    RestConfig config;
    config.token = "abc";
    Authenticator tokenAuth(config, clock);
    CHECK(tokenAuth.authorization() == std::optional<std::string>("Bearer abc"));
    CHECK_FALSE(tokenAuth.pluginCertificate());
    CHECK_FALSE(tokenAuth.invalidate());  // retrying cannot fix a static token

    RestConfig basic;
    basic.username = "admin";
    basic.password = "p@ss:word";
    Authenticator basicAuth(basic, clock);
    CHECK(basicAuth.authorization() ==
          std::optional<std::string>("Basic " + base64Encode("admin:p@ss:word")));

    RestConfig none;
    Authenticator anonymous(none, clock);
    CHECK_FALSE(anonymous.authorization());
}

TEST_CASE("tokenFile is re-read when it changes", "[auth]") {
    TempDir dir;
    FakeClock clock;
    RestConfig config;
    config.tokenFile = dir.write("token", "first\n");
    config.token = "first";
    Authenticator auth(config, clock);
    CHECK(auth.authorization() == std::optional<std::string>("Bearer first"));

    dir.write("token", "second-token");
    CHECK(auth.authorization() == std::optional<std::string>("Bearer second-token"));

    // Rotated the way kubelet does it: a new file renamed over the old one.
    std::string next = dir.write("token.new", "third-token");
    std::rename(next.c_str(), config.tokenFile.c_str());
    CHECK(auth.authorization() == std::optional<std::string>("Bearer third-token"));
    CHECK_FALSE(auth.invalidate());  // same token again: a retry would not help

    std::remove(config.tokenFile.c_str());
    CHECK(auth.authorization() == std::optional<std::string>("Bearer third-token"));
}

TEST_CASE("exec plugin token is cached until it expires and re-run after invalidate", "[auth]") {
    TempDir dir;
    FakeClock clock;  // 2023-11-14
    std::string apiVersion = GENERATE(kV1, kV1beta1);
    RestConfig config =
        execConfig(writeTokenPlugin(dir, apiVersion, "2023-11-14T23:00:00Z"), apiVersion);
    Authenticator auth(config, clock, makeProcessExecPluginRunner(std::chrono::seconds(10)));

    StderrCapture capture(dir.file("stderr"));
    CHECK(auth.authorization() == std::optional<std::string>("Bearer token-1"));
    CHECK(readText(dir.file("stderr")) == "plugin says hello on stderr\n");
    CHECK(readText(dir.file("seen")) == "mode=test args=get-token --fast\n");

    auto info = nlohmann::json::parse(readText(dir.file("info")));
    CHECK(info["apiVersion"] == apiVersion);
    CHECK(info["kind"] == "ExecCredential");
    CHECK(info["spec"]["interactive"] == false);
    CHECK(info["spec"]["cluster"]["server"] == "https://api.example:6443");
    CHECK(info["spec"]["cluster"]["certificate-authority-data"] == base64Encode("CA-PEM"));

    CHECK(auth.authorization() == std::optional<std::string>("Bearer token-1"));
    CHECK(auth.authorization() == std::optional<std::string>("Bearer token-1"));
    CHECK(lineCount(dir.file("runs")) == 1);

    REQUIRE(auth.invalidate());
    CHECK(auth.authorization() == std::optional<std::string>("Bearer token-2"));
    CHECK(lineCount(dir.file("runs")) == 2);

    clock.advance(std::chrono::hours(2));  // past the expiration
    dir.write("expiry", "2023-11-15T03:00:00Z");
    CHECK(auth.authorization() == std::optional<std::string>("Bearer token-3"));
    CHECK(auth.authorization() == std::optional<std::string>("Bearer token-3"));
    CHECK(lineCount(dir.file("runs")) == 3);
}

TEST_CASE("exec plugin returning a client certificate", "[auth]") {
    TempDir dir;
    FakeClock clock;
    std::string script = R"(#!/bin/sh
cat <<'EOF'
{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
 "status": {"clientCertificateData": "-----BEGIN CERTIFICATE-----\nC\n-----END CERTIFICATE-----\n",
            "clientKeyData": "-----BEGIN PRIVATE KEY-----\nK\n-----END PRIVATE KEY-----\n"}}
EOF
)";
    RestConfig config = execConfig(dir.write("cert-plugin", script, 0755), kV1);
    Authenticator auth(config, clock);
    CHECK_FALSE(auth.authorization());
    auto certificate = auth.pluginCertificate();
    REQUIRE(certificate);
    CHECK(certificate->certPem == "-----BEGIN CERTIFICATE-----\nC\n-----END CERTIFICATE-----\n");
    CHECK(certificate->keyPem == "-----BEGIN PRIVATE KEY-----\nK\n-----END PRIVATE KEY-----\n");
}

TEST_CASE("exec plugin failures never echo the plugin's output", "[auth]") {
    TempDir dir;
    FakeClock clock;

    SECTION("non-zero exit") {
        std::string script =
            "#!/bin/sh\necho '{\"status\":{\"token\":\"leaked-secret\"}}'\nexit 3\n";
        RestConfig config = execConfig(dir.write("fail.sh", script, 0755), kV1);
        Authenticator auth(config, clock);
        std::string message = errorOf([&] { auth.authorization(); });
        CHECK_THAT(message, Catch::Contains("failed with exit code 3"));
        CHECK_THAT(message, !Catch::Contains("leaked-secret"));
    }
    SECTION("wrong apiVersion in the reply") {
        RestConfig config =
            execConfig(writeTokenPlugin(dir, kV1beta1, "2030-01-01T00:00:00Z"), kV1);
        Authenticator auth(config, clock);
        StderrCapture capture(dir.file("stderr"));
        std::string message = errorOf([&] { auth.authorization(); });
        CHECK_THAT(message, Catch::Contains("apiVersion does not match"));
        CHECK_THAT(message, !Catch::Contains("token-1"));
    }
    SECTION("command not found shows the install hint") {
        RestConfig config = execConfig("rossoctl-no-such-plugin", kV1);
        config.exec->installHint = "Install it with: apt install rossoctl-plugin\n";
        Authenticator auth(config, clock);
        CHECK_THROWS_AS(auth.authorization(), ConfigError);
        std::string message = errorOf([&] { auth.authorization(); });
        CHECK_THAT(message, Catch::Contains("\"rossoctl-no-such-plugin\": executable not found"));
        CHECK_THAT(message, Catch::EndsWith("apt install rossoctl-plugin"));
    }
    SECTION("a hung plugin is killed after the timeout") {
        RestConfig config =
            execConfig(dir.write("hang.sh", "#!/bin/sh\nexec sleep 30\n", 0755), kV1);
        Authenticator auth(config, clock,
                           makeProcessExecPluginRunner(std::chrono::milliseconds(300)));
        auto started = std::chrono::steady_clock::now();
        CHECK_THAT(errorOf([&] { auth.authorization(); }),
                   Catch::Contains("did not finish within 0.3s"));
        CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
    }
    SECTION("a file that cannot be executed") {
        RestConfig config = execConfig(dir.write("not-exec", "#!/bin/sh\n", 0644), kV1);
        Authenticator auth(config, clock);
        CHECK_THAT(errorOf([&] { auth.authorization(); }), Catch::Contains("Permission denied"));
    }
}

TEST_CASE("exec plugin without a token expiry is cached until a 401", "[auth]") {
    FakeClock clock;
    RestConfig config = execConfig("unused", kV1);
    config.exec->provideClusterInfo = false;
    auto runner = std::make_unique<RecordingRunner>(
        R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
        R"("status":{"token":"forever"}})");
    RecordingRunner& recorder = *runner;
    Authenticator auth(config, clock, std::move(runner));
    CHECK(auth.authorization() == std::optional<std::string>("Bearer forever"));
    clock.advance(std::chrono::hours(24 * 365));
    CHECK(auth.authorization() == std::optional<std::string>("Bearer forever"));
    CHECK(recorder.runs == 1);
    CHECK_FALSE(nlohmann::json::parse(recorder.lastInfo)["spec"].contains("cluster"));
    CHECK(auth.invalidate());
    auth.authorization();
    CHECK(recorder.runs == 2);

    SECTION("a static token wins over the plugin, as in client-go") {
        config.token = "static";
        Authenticator staticAuth(config, clock, std::make_unique<RecordingRunner>(""));
        CHECK(staticAuth.authorization() == std::optional<std::string>("Bearer static"));
    }
}

TEST_CASE("parseExecCredential validates the reply", "[auth]") {
    auto reply = [](const std::string& status, const std::string& kind = "ExecCredential") {
        return R"({"apiVersion":"client.authentication.k8s.io/v1","kind":")" + kind +
               R"(","status":)" + status + "}";
    };
    ExecCredential credential = parseExecCredential(
        reply(R"({"token":"t","expirationTimestamp":"2030-01-02T03:04:05Z"})"), kV1);
    CHECK(credential.token == "t");
    REQUIRE(credential.expiration);
    CHECK(std::chrono::system_clock::to_time_t(*credential.expiration) == 1893553445);

    CHECK_THROWS_AS(parseExecCredential("not json secret-value", kV1), ConfigError);
    CHECK_THAT(errorOf([] { parseExecCredential("{\"token\": \"secret-value\"", kV1); }),
               !Catch::Contains("secret-value"));
    CHECK_THAT(errorOf([&] { parseExecCredential(reply(R"({"token":"t"})", "Other"), kV1); }),
               Catch::Contains("kind is not ExecCredential"));
    CHECK_THAT(errorOf([&] { parseExecCredential(reply(R"({"token":"t"})"), kV1beta1); }),
               Catch::Contains("apiVersion does not match"));
    CHECK_THAT(errorOf([&] { parseExecCredential(reply("{}"), kV1); }),
               Catch::Contains("neither a token nor a client certificate"));
    CHECK_THAT(errorOf([&] { parseExecCredential(reply(R"({"clientKeyData":"k"})"), kV1); }),
               Catch::Contains("must be set together"));
    CHECK_THAT(errorOf([&] {
                   parseExecCredential(reply(R"({"token":"t","expirationTimestamp":"soon"})"), kV1);
               }),
               Catch::Contains("not an RFC 3339 time"));
    CHECK_THAT(errorOf([&] { parseExecCredential(reply(R"({"token":42})"), kV1); }),
               Catch::Contains("status.token is not a string"));
}

TEST_CASE("base64 round trip", "[auth]") {
    for (std::string text : {"", "a", "ab", "abc", "abcd", "admin:p@ss:word"}) {
        CHECK(base64Decode(base64Encode(text)) == std::optional<std::string>(text));
    }
    CHECK(base64Encode("admin:secret") == "YWRtaW46c2VjcmV0");
    CHECK(base64Decode("YWJj\nZA") == std::optional<std::string>("abcd"));
    CHECK_FALSE(base64Decode("YW*j"));
    CHECK_FALSE(base64Decode("YWJjZA==YQ=="));
}

// Review 47b finding 2: a token with CR/LF (a token file, a kubeconfig, a plugin's reply) added
// header lines to every request, and could end an upgrade's head early.
TEST_CASE("a token holding CR or LF is refused before any request is sent", "[auth][review47b]") {
    for (const std::string& token :
         std::vector<std::string>{"tok\r\nX-Injected: yes", "a\nb", std::string("a\0b", 3)}) {
        kube::RestConfig config = testing::fakeRestConfig();
        config.token = token;
        testing::ClientFixture fixture(0, config);
        fixture.server.reply(200, "{}");
        try {
            fixture.client->get(kube::resources::pods(), "team1", "x");
            FAIL("sent");
        } catch (const ConfigError& error) {
            CHECK(std::string(error.what()).find("control character") != std::string::npos);
            CHECK(std::string(error.what()).find("X-Injected") == std::string::npos);
        }
        CHECK(fixture.server.requests.empty());
    }
}
