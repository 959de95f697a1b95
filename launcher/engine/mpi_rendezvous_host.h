#pragma once
// The one place that handles "MPI detected, no endpoint given": MPI's variables give every
// process its rank but not rank 0's host, where the store is. Under a PMIx server (Open MPI's
// mpirun, PRRTE, srun --mpi=pmix) the agents ask it: rank 0 publishes its address and every
// agent reads it (pmix_exchange.h; the address rule is advertised_address.h). Without PMIx, or
// when the exchange fails, the answer is a one-line error naming the flags to add.
//
// Not pure, unlike the rest of launcher/engine: the exchange forks a child process that talks
// to the PMIx server, bounded by kMpiAddressExchangeTimeout; it is compiled into the launcher
// library. Call while the process has one thread (option parsing, before the agent starts).

#include <chrono>
#include <optional>
#include <string>

#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// How long the exchange may take: every agent must reach PMIx's fence, and mpirun starts them
// at once, so this bounds only a job where some rank never runs cpplaunch.
constexpr std::chrono::seconds kMpiAddressExchangeTimeout{120};

// Rank 0's address for `facts` (an MPI reading without rdzv_host), or nullopt with *error =
// one line saying why and naming --master-addr and --rdzv-endpoint.
std::optional<std::string> FindMpiRendezvousHost(const EnvMap& env, const EngineFacts& facts,
                                                 std::string* error);

}  // namespace cpplaunch
