// sandbox run --keep against the local cluster (walk4 B1): the lines it prints are rossoctl's
// own, and they exec into the kept pod, copy from it, read its log and delete it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "harness.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The "  rossoctl sandbox VERB ..." lines of stderr, as argv after "rossoctl", by VERB.
std::map<std::string, std::vector<std::string>> printedLines(const std::string& err) {
    std::map<std::string, std::vector<std::string>> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("  rossoctl sandbox ", 0) != 0) continue;
        std::istringstream words(line.substr(11));
        std::vector<std::string> argv;
        for (std::string word; words >> word;) argv.push_back(word);
        if (argv.size() > 1) lines[argv[1]] = argv;
    }
    return lines;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("sandbox run --keep prints rossoctl lines that exec into, copy from and delete its pod",
          "[run][keep]") {
    harness::TestNamespace project("keep54", /*create=*/false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl({"project", "create", ns});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    auto run = harness::rossoctl({"sandbox", "run", "-n", ns, "--keep", "--timeout", "120s", "--",
                                  "sh", "-c", "echo kept > out/note.txt; echo ran"});
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    CHECK(run.out == "ran\n");
    CHECK_THAT(run.err, Catch::Contains("it ends by itself at") &&
                            Catch::Contains(": --timeout plus 60s), then \"rossoctl gc -n " + ns) &&
                            !Catch::Contains("kubectl"));
    auto lines = printedLines(run.err);
    REQUIRE(lines.count("exec"));
    REQUIRE(lines.count("cp"));
    // The run's output went through exec, not into the container's log (walk5 MINOR 6).
    CHECK_FALSE(lines.count("logs"));
    REQUIRE(lines.count("delete"));
    const std::string pod = lines["delete"].back() == ns ? lines["delete"][2].substr(4) : "";
    REQUIRE(!pod.empty());

    // exec: the printed line, with a command of ours in place of its "sh".
    auto exec = lines["exec"];
    REQUIRE(exec.back() == "sh");
    exec.back() = "cat";
    exec.push_back("/workspace/out/note.txt");
    auto cat = harness::rossoctl(exec);
    INFO(cat.err);
    CHECK(cat.exitCode == 0);
    CHECK(cat.out == "kept\n");

    // cp: the printed line, into a directory of the test's.
    std::string dir = (fs::temp_directory_path() / "rossoctl-keep54-XXXXXX").string();
    REQUIRE(::mkdtemp(dir.data()) != nullptr);
    auto cp = lines["cp"];
    REQUIRE(cp[3] == "./out");
    cp[3] = dir + "/out";
    auto copied = harness::rossoctl(cp);
    INFO(copied.err);
    CHECK(copied.exitCode == 0);
    CHECK(slurp(dir + "/out/note.txt") == "kept\n");
    fs::remove_all(dir);

    // logs of the kept pod says where the run's output is not, and still exits 0.
    auto logs = harness::rossoctl({"sandbox", "logs", "pod/" + pod, "-n", ns});
    INFO(logs.err);
    CHECK(logs.exitCode == 0);
    CHECK_THAT(logs.err, Catch::Contains("exec"));

    // A pod of the same spec that rossoctl did not create is neither reached nor deleted.
    json other = harness::admin().get(rossoctl::kube::resources::pods(), ns, pod);
    json foreign = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"name", "not-ours"}}},
                    {"spec", other["spec"]}};
    foreign["spec"].erase("nodeName");
    harness::admin().create(rossoctl::kube::resources::pods(), ns, foreign);
    auto refused = harness::rossoctl({"sandbox", "exec", "pod/not-ours", "-n", ns, "--", "true"});
    CHECK(refused.exitCode == 1);
    CHECK_THAT(refused.err, Catch::Contains("was not created by \"rossoctl sandbox run\""));
    CHECK(harness::rossoctl({"sandbox", "delete", "pod/not-ours", "-n", ns}).exitCode == 1);
    CHECK(harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, "not-ours"));

    // delete: the printed line; the pod goes.
    auto deleted = harness::rossoctl(lines["delete"]);
    INFO(deleted.err);
    CHECK(deleted.exitCode == 0);
    CHECK(deleted.out == "pod/" + pod + " deleted\n");
    CHECK(harness::eventually(
        [&] { return !harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, pod); },
        60));
}
