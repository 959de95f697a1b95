#pragma once
// PyTorch >= 2.4 built without libuv (Debian's 2.6) still defaults TCPStore to use_libuv=True,
// so every worker's init_process_group("env://") on the agent's store fails at once with the
// same message. When the failed workers all say so, the summary adds one line on what to do.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/cli/options.h"
#include "launcher/report/failure_report.h"

namespace cpplaunch {

// What PyTorch raises (its own spelling, "build").
inline constexpr std::string_view kLibuvMissing =
    "use_libuv was requested but PyTorch was build without libuv support";

// Pure. The hint line (without "cpplaunch: ") when `failure_texts` is not empty and every
// text contains kLibuvMissing; the advice depends on the --worker-store in use.
std::optional<std::string> LibuvHint(const std::vector<std::string>& failure_texts,
                                     WorkerStore worker_store);

// What one failed worker left behind: its error file's message and traceback, and the last
// 64 KiB of `stderr_log` when that file exists (-r/-t). Never throws.
std::string FailureText(const WorkerFailure& failure, const std::filesystem::path& stderr_log);

}  // namespace cpplaunch
