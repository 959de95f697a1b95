#pragma once
// --rdzv-conf read once, into typed settings per backend. The command line is the only reader
// of the key/value text: the agent reads these fields, so that an unknown key, a malformed
// value or a key of another backend is a usage error (one line, exit 2) before the agent
// creates anything (log directory, store, workers). Pure: the secret file is named here, its
// contents are read by the agent (launcher/agent/store_security.h).
//
// Keys, by the backend that reads them (--standalone reads as c10d):
//   every backend   timeout, join_timeout, last_call_timeout, close_timeout, read_timeout,
//                   keep_alive_interval, heartbeat_timeout (seconds, fractions allowed),
//                   keep_alive_max_attempt (an integer >= 1);
//                   secret_file, allowed_peers, store_max_bytes (the store the agent, or for
//                   etcd each round's first host, serves: docs/security.md)
//   static, c10d    is_host (a boolean: this agent serves the store)
//   c10d, etcd,     quarantine_after (an integer >= 0: set a host aside after it was the root
//   etcd-v2, -v3    cause of that many failed attempts, when a spare can take its place; 0: never),
//                   segment (the part of the cluster this host sits in: a lost host's slot goes
//                   to a spare of its segment first; letters, digits and . _ : / -, 1-64 bytes)
//   etcd, etcd-v2,  protocol (http|https), cacert|ca_cert, cert|ssl_cert, key|ssl_cert_key,
//   etcd-v3         etcd_prefix (starts with '/')

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/cli/rdzv_config.h"
#include "rendezvous/store/peer_networks.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// The environment's name for the secret file, when --rdzv-conf names none.
inline constexpr const char* kSecretFileVariable = "CPPLAUNCH_RDZV_SECRET_FILE";

// The rendezvous's and the agents' channel timings. A key not given is nullopt: its default is
// torchrun's, and belongs to whoever uses it (the multi-host plan).
struct RdzvTimings {
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::chrono::milliseconds> join_timeout;
  std::optional<std::chrono::milliseconds> last_call_timeout;
  std::optional<std::chrono::milliseconds> close_timeout;
  std::optional<std::chrono::milliseconds> read_timeout;
  std::optional<std::chrono::milliseconds> keep_alive_interval;
  std::optional<std::chrono::milliseconds> heartbeat_timeout;
  std::optional<int> keep_alive_max_attempt;  // >= 1

  friend bool operator==(const RdzvTimings&, const RdzvTimings&) = default;
};

// How the store this agent may serve is protected and bounded.
struct StoreSettings {
  // secret_file, else CPPLAUNCH_RDZV_SECRET_FILE; nullopt: no secret. `secret_source` names
  // which one, for the agent's error when the file cannot be used.
  std::optional<std::string> secret_file;
  std::string secret_source;
  std::vector<PeerNetwork> allowed_peers;  // empty: every peer may connect
  std::optional<uint64_t> max_bytes;       // store_max_bytes; nullopt: the store's default

  friend bool operator==(const StoreSettings&, const StoreSettings&) = default;
};

// The etcd backends' client settings.
struct EtcdConfSettings {
  bool https = false;   // protocol=https
  std::string ca_file;  // cacert | ca_cert
  std::string cert_file;
  std::string key_file;
  std::optional<std::string> prefix;  // etcd_prefix; nullopt: the backend's default

  friend bool operator==(const EtcdConfSettings&, const EtcdConfSettings&) = default;
};

struct RdzvSettings {
  RdzvTimings timings;
  StoreSettings store;
  std::optional<bool> is_host;          // static and c10d only; nullopt: the agent decides
  std::optional<int> quarantine_after;  // dynamic backends only; nullopt: the default, 2
  std::string segment;                  // dynamic backends only; "": none
  EtcdConfSettings etcd;                // the etcd backends only

  friend bool operator==(const RdzvSettings&, const RdzvSettings&) = default;
};

// Reads `conf` for `backend` ("static", "c10d", "etcd", "etcd-v2" or "etcd-v3"; "c10d" for
// --standalone); `env` supplies CPPLAUNCH_RDZV_SECRET_FILE. nullopt with *error (one line)
// on the first unknown key, key of another backend or malformed value, keys in name order.
std::optional<RdzvSettings> ReadRdzvSettings(const RdzvConfig& conf, std::string_view backend,
                                             const EnvMap& env, std::string* error);

}  // namespace cpplaunch
