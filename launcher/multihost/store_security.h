#pragma once
// The store's protection settings (docs/security.md), from the options and the environment:
//   --rdzv-conf secret_file=PATH        the agents' shared secret (base/secret_file.h rules);
//   CPPLAUNCH_RDZV_SECRET_FILE=PATH      the same when --rdzv-conf names none;
//   --rdzv-conf allowed_peers=LIST      CIDR blocks allowed to connect to the store port,
//                                       separated by ';' (',' separates --rdzv-conf keys).
// The secret is key bytes for the agents' store connections and the store; it is never put in
// any environment, so workers never see it. Blocking (reads the file once).

#include <optional>
#include <string>
#include <vector>

#include "launcher/cli/rdzv_config.h"
#include "rendezvous/store/peer_networks.h"
#include "rendezvous/store/store_budget.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

inline constexpr const char* kSecretFileVariable = "CPPLAUNCH_RDZV_SECRET_FILE";

struct StoreSecurity {
  std::string secret;                      // empty: no secret configured
  std::vector<PeerNetwork> allowed_peers;  // empty: every peer may connect
  // --rdzv-conf store_max_bytes: what clients can make the store hold. Not loaded by
  // LoadStoreSecurity: a malformed value is a value error (exit 1), as torchrun's are for
  // --rdzv-conf; the agent fills it from StoreBudgetFromConf (start_store.h).
  BudgetLimits budget;
};

// nullopt with *error (one line, e.g. "--rdzv-conf secret_file: the secret file /s is empty;
// put the shared secret in it") when the file cannot be used or the list is malformed: a usage
// error (exit 2).
std::optional<StoreSecurity> LoadStoreSecurity(const RdzvConfig& conf, const EnvMap& env,
                                               std::string* error);

}  // namespace cpplaunch
