// -o jsonpath, custom-columns and --sort-by against a server's nesting (hostile-server review,
// H2): recursive descent finds values inside one another, so copying each match grew memory
// with depth times size (3.1 GB RSS, then bad_alloc, for 240 levels around 8 MB); matches are
// now read in place and printed as they are reached, and the walk is bounded.
#include <catch2/catch.hpp>
#include <sstream>
#include <streambuf>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/jsonpath.hpp"

using namespace rossoctl;
using nlohmann::json;

namespace {

// `levels` objects {"image": ...} inside one another around {"big": big}, as the reviewer sent.
json nestedImages(size_t levels, const std::string& big) {
    json inner = {{"big", big}};
    for (size_t i = 0; i < levels; ++i) inner = json{{"image", std::move(inner)}};
    return inner;
}

// Counts what reaches it and remembers the largest single write: a template printed as it goes
// writes a match at a time, never the whole output at once.
class WriteRecorder : public std::streambuf {
  public:
    size_t total = 0;
    size_t largestWrite = 0;

  protected:
    std::streamsize xsputn(const char*, std::streamsize count) override {
        total += static_cast<size_t>(count);
        largestWrite = std::max(largestWrite, static_cast<size_t>(count));
        return count;
    }
    int_type overflow(int_type c) override {
        ++total;
        largestWrite = std::max<size_t>(largestWrite, 1);
        return traits_type::not_eof(c);
    }
};

}  // namespace

TEST_CASE("jsonpath {..image} prints every nested match as it reaches it, holding none",
          "[jsonpath][hostile]") {
    const std::string big(100 * 1024, 'x');
    const json document = nestedImages(100, big);
    // What kubectl prints: each of the 100 matches (the outermost first) as compact JSON.
    size_t expected = 0;
    const json* level = &document;
    for (size_t i = 0; i < 100; ++i, level = &(*level)["image"])
        expected += (i == 0 ? 0 : 1) + (*level)["image"].dump().size();

    WriteRecorder recorder;
    std::ostream out(&recorder);
    ui::printJsonPath(out, document, "{..image}", false);
    CHECK(recorder.total == expected);  // about 10 MB
    // The big string goes out from the document itself; nothing joined the 10 MB first.
    CHECK(recorder.largestWrite <= big.size());

    const auto found = ui::findPath(document, "{..image}");
    REQUIRE(found.size() == 100);
    CHECK(found.front() == &document["image"]);  // in place, not a copy of the subtree
}

TEST_CASE("jsonpath's walk is bounded: {..a..a..a..b} through 250 levels stops with an error",
          "[jsonpath][hostile]") {
    json document = "x";
    for (int i = 0; i < 250; ++i) document = json{{"a", std::move(document)}, {"b", 1}};
    // Each ".." multiplies the walk by the depth: some 250^4/24 visits, were it not bounded.
    std::ostringstream out;
    CHECK_THROWS_WITH(ui::printJsonPath(out, document, "{..a..a..a..b}", false),
                      Catch::Contains("visits more than 20000000 values"));
    CHECK_THROWS_AS(ui::findPath(document, "{..a..a..a..b}"), Error);
    // One ".." is a walk of the document, however deep: all 250 "b" are found.
    CHECK(ui::findPath(document, "{..b}").size() == 250);
}
