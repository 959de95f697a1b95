#include "launcher/report/attempt_failures.h"

namespace cpplaunch {

std::vector<FailureRecord> AttemptFailureRecords(const AttemptResult& result, int base_rank,
                                                 const std::string& host, const LogDir& log_dir) {
  std::vector<FailureRecord> records;
  for (const ExitRecord& exit : result.exits) {
    if (exit.role == ExitRole::kSucceeded) continue;
    FailureRecord record;
    record.local_rank = exit.event.id;
    record.global_rank = base_rank + exit.event.id;
    record.pid = exit.event.pid;
    record.exit = exit.event.exit;
    record.time = exit.event.time;
    record.host = host;
    // The attempt that ended, not the agent's current one: a restart may already be planned.
    record.error_file = log_dir.ErrorFile(result.restart_count, exit.event.id).string();
    record.killed_by_teardown = exit.role == ExitRole::kStopped;
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace cpplaunch
