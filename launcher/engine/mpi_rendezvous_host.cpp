#include "launcher/engine/mpi_rendezvous_host.h"

#include "launcher/engine/pmix_exchange.h"

namespace cpplaunch {

std::optional<std::string> FindMpiRendezvousHost(const EnvMap& env, const EngineFacts& facts,
                                                 std::string* error) {
  const std::string flags =
      "add --master-addr=HOST (rank 0's host; mpirun -x MASTER_ADDR does not set it) or "
      "--rdzv-endpoint=HOST:PORT";
  if (!PmixPresent(env)) {
    *error = facts.label + ": no MPI variable names rank 0's host; " + flags;
    return std::nullopt;
  }
  const PmixExchangeResult exchange = ExchangeRankZeroAddress(env, kMpiAddressExchangeTimeout);
  if (exchange.ok()) return exchange.address;
  *error = facts.label + ": no MPI variable names rank 0's host and PMIx could not tell (" +
           exchange.error + "); " + flags;
  return std::nullopt;
}

}  // namespace cpplaunch
