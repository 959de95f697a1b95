#pragma once
// Why a worker's program could not be run (exit 126/127): looks the program up as the spawn
// did (PATH from the worker's environment, ExecCandidates in base/executable_search.h) and
// checks what is there.
// Reads file metadata only; never throws.

#include <optional>
#include <string>

#include "launcher/diagnosis/exit_explanation.h"

namespace cpplaunch {

// `path_value`: the PATH the worker was given (nullopt: unset).
ProgramCheck CheckProgram(const std::string& program, const std::optional<std::string>& path_value);

}  // namespace cpplaunch
