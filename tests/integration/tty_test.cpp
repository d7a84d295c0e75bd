// `sandbox exec -it` on a real terminal (a pty from script(1)) against a real pod printing what
// a hostile program would: what reaches the user's terminal is the TTY filter's allow-list, and
// the session ends with every keyboard mode reset.
#include <catch2/catch.hpp>

#include "build_info.hpp"
#include "harness.hpp"

namespace {

const nlohmann::json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};

}  // namespace

TEST_CASE("exec -it passes a pod's keyboard modes only where the end resets them",
          "[hostile][tty]") {
    harness::TestNamespace ns("tty", true, kRestricted);
    REQUIRE(harness::rossoctl({"project", "create", ns.name(), "--adopt"}).exitCode == 0);
    auto imported = harness::rossoctl({"agents", "import", "--deployment-type", "sandbox",
                                       "from-image", "--name", "orders", "--containerImage",
                                       "curlimages/curl:8", "-n", ns.name()});
    INFO(imported.err);
    REQUIRE(imported.exitCode == 0);
    REQUIRE(harness::rossoctl({"agents", "wait", "orders", "--timeout", "2m", "-n", ns.name()})
                .exitCode == 0);
    // XTMODKEYS 6 (modifyModifierKeys) is one the end does not reset; 4 is; OSC 52 writes the
    // clipboard. The pod's own printf makes the bytes.
    const std::string command =
        std::string(harness::rossoctlBinary()) + " --kubeconfig " + harness::kubeconfigPath() +
        " sandbox exec -it orders -n " + ns.name() +
        " -- printf '\\033[>6;2m\\033]52;c;Zm9v\\007\\033[>4;2mpod-said-ok'";
    auto session = harness::run({"script", "-qec", command, "/dev/null"}, {},
                                {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm"}});
    INFO("exit " << session.exitCode << "\n" << session.out << session.err);
    CHECK(session.exitCode == 0);
    CHECK(session.out.find("pod-said-ok") != std::string::npos);
    CHECK(session.out.find("\x1b[>6;2m") == std::string::npos);
    CHECK(session.out.find("\x1b]52") == std::string::npos);
    CHECK(session.out.find("\x1b[>4;2m") != std::string::npos);  // allowed: reset at the end
    const auto said = session.out.find("pod-said-ok");
    const auto reset = session.out.rfind("\x1b[>4m");
    CHECK(reset != std::string::npos);
    CHECK((reset > said && said != std::string::npos));
}
