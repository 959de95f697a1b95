#include "launcher/engine/mpi_rendezvous_host.h"

namespace cpplaunch {

std::optional<std::string> FindMpiRendezvousHost(const EnvMap& /*env*/, const EngineFacts& facts,
                                                 std::string* error) {
  *error = facts.label +
           ": no MPI variable names rank 0's host; add --master-addr=HOST (rank 0's host; "
           "mpirun -x MASTER_ADDR does not set it) or --rdzv-endpoint=HOST:PORT";
  return std::nullopt;
}

}  // namespace cpplaunch
