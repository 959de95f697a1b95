#pragma once
// The one place that handles "MPI detected, no endpoint given": MPI's variables give every
// process its rank but not rank 0's host, where the store is. A runtime query (the PMIx
// exchange) belongs here; without one the answer is a one-line error naming the flags to add.

#include <optional>
#include <string>

#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// Rank 0's host for `facts` (an MPI reading without rdzv_host), or nullopt with *error = one
// line naming --master-addr and --rdzv-endpoint.
std::optional<std::string> FindMpiRendezvousHost(const EnvMap& env, const EngineFacts& facts,
                                                 std::string* error);

}  // namespace cpplaunch
