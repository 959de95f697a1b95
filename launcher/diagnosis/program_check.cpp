#include "launcher/diagnosis/program_check.h"

#include <filesystem>
#include <system_error>

#include "base/executable_search.h"

namespace cpplaunch {

ProgramCheck CheckProgram(const std::string& program,
                          const std::optional<std::string>& path_value) {
  using std::filesystem::perms;
  ProgramCheck found = ProgramCheck::kNotFound;
  for (const std::string& candidate :
       ExecCandidates(program, path_value ? path_value->c_str() : nullptr)) {
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(candidate, ec);
    if (ec || !std::filesystem::exists(status)) continue;
    const bool executable =
        (status.permissions() & (perms::owner_exec | perms::group_exec | perms::others_exec)) !=
        perms::none;
    if (std::filesystem::is_regular_file(status) && executable) return ProgramCheck::kRunnable;
    found = ProgramCheck::kNotExecutable;
  }
  return found;
}

}  // namespace cpplaunch
