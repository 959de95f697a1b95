#pragma once
// The failed and torn-down workers of one attempt as the failure report describes them. Pure.

#include <string>
#include <vector>

#include "launcher/output/log_dir.h"
#include "launcher/process/supervisor.h"
#include "launcher/report/failure_report.h"

namespace cpplaunch {

// One record per exit that was not a success, in the order observed. `base_rank` is the global
// rank of this host's local rank 0; `host` the name shown in the report.
std::vector<FailureRecord> AttemptFailureRecords(const AttemptResult& result, int base_rank,
                                                 const std::string& host, const LogDir& log_dir);

}  // namespace cpplaunch
