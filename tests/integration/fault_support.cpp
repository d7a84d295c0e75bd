#include "fault_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "rossoctl/kube/resource.hpp"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;
namespace resources = rossoctl::kube::resources;

std::string clusterScript() {
    if (const char* script = std::getenv("ROSSOCTL_CLUSTER_SCRIPT")) return script;
    const fs::path beside =
        fs::path(clusterDir()).parent_path() / "tests" / "cluster" / "local-cluster";
    if (fs::exists(beside)) return beside.string();
    return std::string(harness::sourceDir()).append("/tests/cluster/local-cluster");
}

namespace {

void control(const std::string& verb, const std::string& component) {
    auto result = run({clusterScript(), verb, component, "--state-dir", clusterDir()}, {}, {}, 180);
    INFO(verb << " " << component << ": " << result.out << result.err);
    CHECK(result.exitCode == 0);
}

std::string readFile(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

}  // namespace

Stopped::Stopped(std::string component) : component_(std::move(component)) {
    control("stop", component_);
}

Stopped::~Stopped() {
    if (!restored_) restore();
}

void Stopped::restore() {
    restored_ = true;
    control("start", component_);
    if (component_ == "kube-apiserver")
        eventually([] {
            admin().get(resources::namespaces(), "", "default");
            return true;
        });
}

void apiserverOutage(std::chrono::milliseconds length) {
    Stopped apiserver("kube-apiserver");
    std::this_thread::sleep_for(length);
}

Background::Background(const std::vector<std::string>& args) {
    std::random_device random;
    const std::string base = (fs::temp_directory_path() / "rossoctl-bg-").string() +
                             std::to_string(random()) + std::to_string(::getpid());
    outPath_ = base + ".out";
    errPath_ = base + ".err";
    pid_ = spawnRossoctl(args, {"/dev/null", outPath_, errPath_});
}

Background::~Background() {
    if (running()) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    fs::remove(outPath_);
    fs::remove(errPath_);
}

void Background::signal(int number) const {
    ::kill(pid_, number);
}

bool Background::running() {
    if (exitCode_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
    exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
}

RunResult Background::wait(int timeoutSeconds) {
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    while (running() && std::chrono::steady_clock::now() < giveUp)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (running()) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        exitCode_ = -1;  // hung: the test fails on the exit code
    }
    return {*exitCode_, readFile(outPath_), readFile(errPath_)};
}

std::string Background::output() const {
    return readFile(outPath_);
}

void importReadyAgent(const std::string& ns, const std::string& name) {
    auto result = rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                            "--name", name, "--containerImage", "curlimages/curl:8", "-n", ns});
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
    auto wait = rossoctl({"agents", "wait", name, "--timeout", "2m", "-n", ns});
    INFO(wait.err);
    REQUIRE(wait.exitCode == 0);
}

std::optional<json> pod(const std::string& ns, const std::string& name) {
    return admin().getIfExists(resources::pods(), ns, name);
}

std::string uidOf(const std::optional<json>& object) {
    if (!object) return {};
    return (*object)["metadata"].value("uid", "");
}

std::vector<json> pods(const std::string& ns, const std::string& selector) {
    rossoctl::kube::ListOptions options;
    options.labelSelector = selector;
    const json list = admin().list(resources::pods(), ns, options);  // kept: items refer into it
    std::vector<json> items;
    for (const auto& item : list["items"]) items.push_back(item);
    return items;
}

}  // namespace harness
