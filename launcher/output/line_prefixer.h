#pragma once
// Turns a worker's raw output bytes into whole console lines, each starting with a prefix such as
// "[default3]:" (torchrun's tee format: no space after the colon). Pure: no I/O, no clock.
// Not thread-safe; one instance per worker stream.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

// torchrun's prefix. Without a template (absent or empty): "[" + role + local_rank + "]:". With
// one (newest torchrun's TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE), Python's
// Template.safe_substitute of ${role_name}, ${rank} (global) and ${local_rank}; other "$name"
// and "$$" as Python does. The result is the whole prefix: nothing ("[", "]:") is added.
std::string FormatLinePrefix(std::optional<std::string_view> prefix_template, std::string_view role,
                             int rank, int local_rank);

class LinePrefixer {
 public:
  // A line that grows past this without a newline is emitted in pieces of this size, each
  // prefixed and newline-terminated, so a worker that never writes '\n' (or a progress bar
  // using '\r') cannot grow the agent's memory without bound.
  static constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

  explicit LinePrefixer(std::string prefix, std::size_t max_line_bytes = kMaxLineBytes);

  // Appends to `out` every line that `bytes` completes, each as prefix + line + '\n', and keeps
  // the trailing partial line for the next call. Only appends to `out`: the caller reuses one
  // buffer (write it, clear() it) so the steady state allocates nothing.
  void Feed(std::string_view bytes, std::string& out);

  // Appends the kept partial line, if any, as prefix + bytes + '\n' and forgets it. Unlike
  // torchrun (which writes a partial last line as-is) a newline is added, so the next console
  // line, possibly another worker's, starts on its own line. Log files get the raw bytes: the
  // newline exists only on the console.
  void Flush(std::string& out);

  bool has_partial() const { return !partial_.empty(); }
  const std::string& prefix() const { return prefix_; }

 private:
  void AppendLine(std::string_view tail, std::string& out);

  std::string prefix_;
  std::size_t max_line_bytes_;
  std::string partial_;
};

}  // namespace cpplaunch
