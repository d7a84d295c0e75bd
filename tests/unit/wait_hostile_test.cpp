// What a server that ignores a wait's selectors can make a wait hold (issue 29 review): a wait
// for one name keeps that name only, a wait's set is capped, and list -w is linear in events.
#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/app/list_watch.hpp"
#include "rossoctl/kube/wait.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::ClientFixture;

namespace {

json object(const std::string& name, const std::string& pad = "") {
    json value = {{"metadata", {{"name", name}, {"resourceVersion", "2"}}}};
    if (!pad.empty()) value["metadata"]["annotations"] = {{"pad", pad}};
    return value;
}

const std::string kEmptyList =
    R"({"kind":"NamespaceList","metadata":{"resourceVersion":"1"},"items":[]})";

// `count` ADDED events, each naming a new object, in chunks of 500.
std::vector<std::string> floodOfNames(size_t count, const std::string& pad = "") {
    std::vector<std::string> chunks;
    std::string chunk;
    for (size_t i = 0; i < count; ++i) {
        chunk +=
            json{{"type", "ADDED"}, {"object", object("ns-" + std::to_string(i), pad)}}.dump() +
            "\n";
        if ((i + 1) % 500 == 0) chunks.push_back(std::move(chunk)), chunk.clear();
    }
    if (!chunk.empty()) chunks.push_back(chunk);
    return chunks;
}

}  // namespace

TEST_CASE("a wait for one object keeps no object of another name", "[hostile][wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, kEmptyList);
    auto chunks = floodOfNames(2000, std::string(1000, 'x'));
    chunks.push_back(json{{"type", "ADDED"}, {"object", object("team1")}}.dump() + "\n");
    fixture.server.stream(chunks);
    kube::WaitOptions options;
    options.timeout = std::chrono::minutes(1);
    size_t calls = 0;
    const auto result =
        kube::waitForObject(*fixture.client, fixture.clock, kube::resources::namespaces(), "",
                            "team1", options, [&](const std::optional<json>& found) {
                                ++calls;
                                return found.has_value();
                            });
    CHECK(result.satisfied());
    CHECK(result.objects.size() == 1);  // was 2001: every name the server sent
    CHECK(calls == 2);                  // the list, then the one event that named team1
}

TEST_CASE("a wait's set has a cap: a server naming ever new objects is refused",
          "[hostile][wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, kEmptyList);
    fixture.server.stream(floodOfNames(20'001));
    kube::WaitOptions options;
    options.timeout = std::chrono::minutes(1);
    CHECK_THROWS_WITH(
        kube::waitForSet(*fixture.client, fixture.clock, kube::resources::namespaces(), "", options,
                         [](const kube::ObjectSet&) { return false; }),
        Catch::Contains("more than 20000 objects") && Catch::Contains("refused"));

    ClientFixture bytes;  // fewer, larger objects: the byte cap
    bytes.server.reply(200, kEmptyList);
    bytes.server.stream(floodOfNames(40, std::string(60'000, 'x')));
    options.maxBytes = 1 << 20;
    CHECK_THROWS_WITH(kube::waitForSet(*bytes.client, bytes.clock, kube::resources::namespaces(),
                                       "", options, [](const kube::ObjectSet&) { return false; }),
                      Catch::Contains("more than 1 MiB of objects"));
}

TEST_CASE("list -w shows each change once, in time linear in the events", "[hostile][wait]") {
    ClientFixture fixture;
    const size_t count = 15'000;
    auto chunks = floodOfNames(count);
    chunks.push_back(json{{"type", "DELETED"}, {"object", object("ns-7")}}.dump() + "\n");
    fixture.server.stream(chunks);
    kube::CancelFlag cancel;
    size_t shown = 0;
    std::string lastShown;
    const auto started = std::chrono::steady_clock::now();
    app::followList(*fixture.client, fixture.clock, kube::resources::namespaces(), "", "", &cancel,
                    json::parse(kEmptyList), false, [&](const json& changed) {
                        ++shown;
                        lastShown = changed["metadata"]["name"];
                        if (shown == count + 1) cancel.cancel();
                    });
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(shown == count + 1);
    CHECK(lastShown == "ns-7");  // the deleted one, in its last state
    // Scanning the whole set per event took ~10 s here; linear takes well under one.
    CHECK(took < std::chrono::seconds(4));
}

TEST_CASE("a watch that ends at once, or answers 410 each time, is retried with backoff",
          "[hostile][wait]") {
    // Review 29 (L2): each normal end looped straight back (78,359 watches in 10 s), each 410
    // re-listed at once (227 lists in 10 s). Now 800 ms doubling to 30 s, as client-go's
    // reflector: 0.8+1.6+3.2+6.4+12.8+25.6 s, then the last 9.6 s of a 60 s wait.
    const std::vector<std::chrono::milliseconds> pauses = {
        std::chrono::milliseconds(800),   std::chrono::milliseconds(1600),
        std::chrono::milliseconds(3200),  std::chrono::milliseconds(6400),
        std::chrono::milliseconds(12800), std::chrono::milliseconds(25600),
        std::chrono::milliseconds(9600)};
    auto never = [](const kube::ObjectSet&) { return false; };
    kube::WaitOptions options;
    options.timeout = std::chrono::seconds(60);
    SECTION("a watch that ends at once") {
        ClientFixture fixture;
        fixture.server.reply(200, kEmptyList);
        for (int i = 0; i < 50; ++i) fixture.server.stream({});
        const auto result = kube::waitForSet(*fixture.client, fixture.clock,
                                             kube::resources::namespaces(), "", options, never);
        CHECK(result.outcome == kube::WaitOutcome::TimedOut);
        CHECK(fixture.server.requests.size() == 1 + pauses.size());
        CHECK(result.rewatches == static_cast<int>(pauses.size()));
        CHECK(fixture.clock.totalSlept() == std::chrono::seconds(60));
    }
    SECTION("a watch that answers 410 Gone each time") {
        const std::string gone =
            json{{"type", "ERROR"},
                 {"object", {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}}}}
                .dump() +
            "\n";
        ClientFixture fixture;
        for (int i = 0; i < 50; ++i) {
            fixture.server.reply(200, kEmptyList);
            fixture.server.stream({gone});
        }
        const auto result = kube::waitForSet(*fixture.client, fixture.clock,
                                             kube::resources::namespaces(), "", options, never);
        CHECK(result.outcome == kube::WaitOutcome::TimedOut);
        CHECK(result.relists == static_cast<int>(pauses.size()));
        CHECK(fixture.server.requests.size() == 2 * pauses.size());
        CHECK(fixture.clock.totalSlept() == std::chrono::seconds(60));
    }
    SECTION("a watch that lasted a while is followed at once") {
        ClientFixture fixture;
        fixture.server.latency = std::chrono::seconds(40);
        fixture.server.reply(200, kEmptyList);
        for (int i = 0; i < 4; ++i) fixture.server.stream({});
        options.timeout = std::chrono::seconds(200);
        const auto result = kube::waitForSet(*fixture.client, fixture.clock,
                                             kube::resources::namespaces(), "", options, never);
        CHECK(result.outcome == kube::WaitOutcome::TimedOut);
        CHECK(fixture.server.requests.size() == 5);
        CHECK(fixture.clock.totalSlept() == std::chrono::milliseconds(0));
    }
}
