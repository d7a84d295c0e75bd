#pragma once
// What a second Ctrl-C says. The first one cancels and lets the command clean up; a second one
// exits at once (main's signal thread calls _exit), and whatever the running operation had not
// cleaned up yet stays. The operation registers, while it holds such objects, one preformatted
// line saying what is left and what removes it; the signal thread writes it with write(2) only
// (no allocation, no lock), as other threads may hold the allocator's lock when it exits.
#include <array>
#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

namespace rossoctl::app {

class InterruptNote {
  public:
    static constexpr size_t kCapacity = 1024;

    // Sets the line (a newline is added; a longer one is cut to kCapacity).
    void set(std::string_view line);
    void clear() { active_.store(-1); }
    // The line a second interrupt would write, "" when none is set.
    std::string text() const;
    // Writes the line, or `fallback` when none is set, to `fd`: write(2) only.
    void writeTo(int fd, std::string_view fallback) const;

    // Sets the line for as long as it lives.
    class Scope {
      public:
        Scope(InterruptNote* note, std::string_view line) : note_(note) {
            if (note_) note_->set(line);
        }
        ~Scope() {
            if (note_) note_->clear();
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

      private:
        InterruptNote* note_;
    };

  private:
    // Two buffers: set() fills the one not shown, then shows it, so the signal thread never
    // reads a line half-written.
    std::array<std::array<char, kCapacity + 1>, 2> lines_{};
    std::array<std::atomic<size_t>, 2> lengths_{};
    std::atomic<int> active_{-1};
};

// The line when no operation registered one.
inline constexpr std::string_view kSecondInterruptFallback =
    "second interrupt: exiting now, without the cleanup a first one does\n";

}  // namespace rossoctl::app
