#pragma once
// Bytes piped to a command that does not read its stdin are dropped without a word; this says
// whether there were any, so the command can say so (walk 6 MINOR 8).

namespace rossoctl::app {

// Whether `descriptor` (Streams::inDescriptor) is a pipe with bytes waiting, or a file with
// bytes after its offset (`echo code | rossoctl sandbox run -- python3 -`, `< main.py`). Never
// reads them; false for a terminal, an empty or closed pipe, /dev/null and -1.
bool stdinHasPipedBytes(int descriptor);

}  // namespace rossoctl::app
