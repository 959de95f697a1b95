#pragma once
// The --json output: every answering agent's /status document as it came, the addresses that
// did not answer with why, and the table's summary counts, for scripts. Pure.
//
//   {"hosts": [<answer>, ...],
//    "unreachable": [{"status_address": "10.0.0.2:8000", "hostname": "vm2", "group_rank": 1,
//                     "error": "Connection refused"}],
//    "summary": {"hosts_answered": 1, "hosts_known": 2, "ranks": 2, "silent": 0}}

#include <nlohmann/json.hpp>
#include <vector>

#include "launcher/status_tool/host_probe.h"
#include "launcher/status_tool/status_rows.h"

namespace cpplaunch::status {

// `hostname` and `group_rank` of an unreachable address are null when no agent named it (an
// address from the command line). An agent asked under two addresses is listed once.
nlohmann::json StatusDocument(const std::vector<HostProbe>& probes, const StatusSummary& summary);

}  // namespace cpplaunch::status
