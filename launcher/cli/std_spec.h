#pragma once
// torchrun's Std spec for --redirects / --tee: which of a worker's streams it applies to.
// Either one value for every local rank ("0".."3": bit 1 = stdout, bit 2 = stderr) or a
// map "lr:v,lr:v" with single-digit local ranks (torchrun's regex
// ^(\d:[0123],)*(\d:[0123])$); ranks missing from a map get 0. Pure value type.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

class StdSpec {
 public:
  static constexpr unsigned kStdout = 1;
  static constexpr unsigned kStderr = 2;

  StdSpec() = default;  // 0 for every rank
  // Returns nullopt and fills *error (torchrun's ValueError text, exit 1) for anything else.
  static std::optional<StdSpec> Parse(std::string_view text, std::string* error);

  unsigned bits_for(int local_rank) const;
  bool stdout_for(int local_rank) const { return (bits_for(local_rank) & kStdout) != 0; }
  bool stderr_for(int local_rank) const { return (bits_for(local_rank) & kStderr) != 0; }
  bool is_map() const { return is_map_; }

  friend bool operator==(const StdSpec&, const StdSpec&) = default;

 private:
  unsigned all_ = 0;                  // when !is_map_
  std::map<int, unsigned> per_rank_;  // when is_map_
  bool is_map_ = false;
};

}  // namespace cpplaunch
