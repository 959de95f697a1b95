#include "worker_env/arg_template.h"

#include "base/text.h"

namespace cpplaunch {

// Only local_rank is known: any other placeholder ("$HOME", "${RANK}") reaches the worker
// verbatim, as under torchrun, because workers are exec'd directly and no shell expands it.
std::string SubstituteLocalRank(std::string_view arg, int local_rank) {
  return SafeSubstitute(arg, [local_rank](std::string_view name) -> std::optional<std::string> {
    if (name == "local_rank") return std::to_string(local_rank);
    return std::nullopt;
  });
}

}  // namespace cpplaunch
