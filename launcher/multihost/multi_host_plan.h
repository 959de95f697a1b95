#pragma once
// How this agent takes part in a multi-host job (--nnodes with MAX > 1), derived from the
// options: which rendezvous, where the store is, whether this agent hosts it, and the
// --rdzv-conf settings as the command line read them (options.rdzv), with torchrun's defaults
// for the keys not given. Pure apart from `is_local_address`.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "launcher/cli/options.h"
#include "launcher/multihost/store_security.h"
#include "rendezvous/c10d/job_channel.h"
#include "rendezvous/core/node_id.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/etcd/etcd_link.h"

namespace cpplaunch {

struct MultiHostPlan {
  bool dynamic = false;  // c10d (or --standalone) or etcd rather than static
  // etcd-v3 (etcd, etcd-v2): the rendezvous and the job channel live in etcd, and no agent
  // hosts a store for the agents (store_host/store_port are unused).
  bool etcd = false;
  EtcdSettings etcd_settings;
  std::string run_id;
  std::string store_host;  // as the user wrote it (master addr or endpoint host)
  int store_port = 0;
  std::string store_port_option = "--master-port";  // where store_port came from, for errors
  bool host_store = false;                          // this agent starts the store server
  bool host_forced = false;  // is_host given: failing to bind is an error, not "be a client"
  StoreSecurity security;    // for the store this agent may host; its secret is in both below
  RendezvousSettings rendezvous;
  JobChannel::Settings channel;
  std::chrono::milliseconds exit_barrier_timeout{std::chrono::seconds(300)};  // the option's
  std::chrono::milliseconds depart_linger{std::chrono::seconds(10)};
};

// True when `host` (numeric or a name) is an address of one of this host's interfaces; the
// real one is IsLocalAddress (host_info.h).
using LocalAddressTest = std::function<bool(const std::string& host)>;

// `hostname` names this agent in messages, `id` (its pid and random part, host_info.h) makes
// its node id (rendezvous/core/node_id.h); `security` (loaded by
// LoadStoreSecurity) goes to the store and, its secret, to every agent connection. Returns
// nullopt with *error for a malformed endpoint (torchrun: exit 1); --rdzv-conf values were
// checked by the command line.
std::optional<MultiHostPlan> PlanMultiHost(const LaunchOptions& options,
                                           const std::string& hostname, const NodeIdParts& id,
                                           const LocalAddressTest& is_local_address,
                                           std::string* error, const StoreSecurity& security = {});

}  // namespace cpplaunch
