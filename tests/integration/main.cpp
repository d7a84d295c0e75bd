// The integration suite: needs the local cluster (tests/cluster/local-cluster up).
#define CATCH_CONFIG_RUNNER
#include <curl/curl.h>

#include <catch2/catch.hpp>

int main(int argc, char** argv) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return Catch::Session().run(argc, argv);
}
