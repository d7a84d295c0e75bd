// The table printer escapes each cell as it writes its line (hostile-server review, M5): it made a
// second, escaped copy of the whole table first, up to four times the table for cells of DEL
// bytes (800,000 empty list items: 853 MB RSS for sandbox list -A).
#include <malloc.h>

#include <catch2/catch.hpp>
#include <sstream>
#include <streambuf>

#include "rossoctl/ui/printer.hpp"

using namespace rossoctl;

namespace {

// The heap in use (glibc's count of allocated bytes).
size_t heapInUse() {
    return mallinfo2().uordblks;
}

// Discards what is written and remembers the most heap in use at any write: the printer's
// working memory while it prints.
class HeapAtWrites : public std::streambuf {
  public:
    size_t most = 0;

  protected:
    std::streamsize xsputn(const char*, std::streamsize count) override {
        most = std::max(most, heapInUse());
        return count;
    }
    int_type overflow(int_type c) override {
        most = std::max(most, heapInUse());
        return traits_type::not_eof(c);
    }
};

}  // namespace

TEST_CASE("a table's cells are escaped as each line is written, not copied first",
          "[printer][hostile]") {
    ui::Table table{{"NAME", "REASON"}, {}, {}};
    const std::string dels(1024, '\x7f');  // each escaped as \x7f: four times the cell
    for (int i = 0; i < 4000; ++i) table.rows.push_back({"sb" + std::to_string(i), dels});
    HeapAtWrites heap;
    std::ostream out(&heap);
    const size_t before = heapInUse();
    ui::printTable(out, table, false, false);
    // The escaped table would be 16 MB; one escaped line is 4 KB.
    CHECK(heap.most - std::min(heap.most, before) < 1024 * 1024);

    std::ostringstream shown;
    ui::printTable(shown, {{"A", "B"}, {{"x\x1b[2J", "\\"}, {"", "y"}}, {}}, false, false);
    CHECK(shown.str() == "A          B\nx\\x1b[2J   \\\\\n           y\n");
}

TEST_CASE("a painted cell keeps its column's width and only its own escapes",
          "[printer][hostile]") {
    ui::Table table{{"NAME", "READY"}, {{"a\x07", "True"}, {"bb", "False"}}, {}};
    table.paints = {{1, 1, ui::Color::Red}, {0, 1, ui::Color::Green}, {5, 0, ui::Color::Red}};
    std::ostringstream out;
    ui::printTable(out, table, false, false);
    CHECK(out.str() ==
          "NAME    READY\n"
          "a\\x07   \x1b[32mTrue\x1b[0m\n"
          "bb      \x1b[31mFalse\x1b[0m\n");
}
