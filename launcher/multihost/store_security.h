#pragma once
// The store's protection settings (docs/security.md), from the command line's StoreSettings
// (launcher/cli/rdzv_settings.h, which checked them):
//   --rdzv-conf secret_file=PATH        the agents' shared secret (base/secret_file.h rules);
//   CPPLAUNCH_RDZV_SECRET_FILE=PATH      the same when --rdzv-conf names none;
//   --rdzv-conf allowed_peers=LIST      CIDR blocks allowed to connect to the store port,
//                                       separated by ';' (',' separates --rdzv-conf keys);
//   --rdzv-conf store_max_bytes=BYTES   what clients can make the store hold.
// The secret is key bytes for the agents' store connections and the store; it is never put in
// any environment, so workers never see it. Blocking (reads the file once).

#include <optional>
#include <string>
#include <vector>

#include "launcher/cli/rdzv_settings.h"
#include "rendezvous/store/peer_networks.h"
#include "rendezvous/store/store_budget.h"

namespace cpplaunch {

struct StoreSecurity {
  std::string secret;                      // empty: no secret configured
  std::vector<PeerNetwork> allowed_peers;  // empty: every peer may connect
  BudgetLimits budget;  // store_max_bytes as total_bytes; the rest the store's defaults
};

// Reads the secret file. nullopt with *error (one line naming the setting's source, e.g.
// "--rdzv-conf secret_file: the secret file /s is empty; put the shared secret in it") when the
// file cannot be used: a usage error (exit 2).
std::optional<StoreSecurity> LoadStoreSecurity(const StoreSettings& settings, std::string* error);

}  // namespace cpplaunch
