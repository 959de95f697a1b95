#pragma once
// The facts about this host that ChooseAdvertisedAddress (advertised_address.h) decides on:
// the route toward the MPI launcher's daemon, the host name's addresses and the interface
// addresses. The OS side of that rule: it asks the resolver, getifaddrs and the routing table.
//
// Blocking: resolving the host name may wait for the resolver (DNS); callers that must not
// hang run it under a deadline (the PMIx exchange runs it in its bounded child). Never throws;
// a fact that cannot be found is left empty.

#include "launcher/engine/advertised_address.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// `env` supplies OMPI_MCA_orte_hnp_uri (Open MPI's mpirun contact address), when set.
AddressFacts GatherAddressFacts(const EnvMap& env);

}  // namespace cpplaunch
