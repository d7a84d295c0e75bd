// Replays every input under tests/fuzz/corpus/<target>/ through its target: crashes found by
// `make fuzz` stay fixed. Prints "N passed, 0 failed"; any escape or crash fails the run.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "targets.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: fuzz_regression CORPUS_DIR\n";
        return 2;
    }
    namespace fs = std::filesystem;
    int passed = 0, failed = 0;
    for (size_t i = 0; i < fuzz::kTargetCount; ++i) {
        fs::path dir = fs::path(argv[1]) / fuzz::kTargets[i].name;
        if (!fs::is_directory(dir)) continue;
        for (const auto& entry : fs::directory_iterator(dir)) {
            std::ifstream file(entry.path(), std::ios::binary);
            std::stringstream bytes;
            bytes << file.rdbuf();
            try {
                fuzz::kTargets[i].run(bytes.str());
                ++passed;
            } catch (const std::exception& e) {
                std::cerr << "FAIL " << entry.path() << ": " << e.what() << '\n';
                ++failed;
            }
        }
    }
    std::cout << "fuzz regression: " << passed << " passed, " << failed << " failed\n";
    return failed == 0 && passed > 0 ? 0 : 1;
}
