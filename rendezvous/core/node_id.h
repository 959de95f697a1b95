#pragma once
// An agent's node id: "<address>_<pid>_<random>", e.g. "10.0.0.2_1_9f3a61c2". It names one
// agent process for the whole job: the rendezvous state lists members by it, and their records,
// heartbeats and liveness keys are keyed by it. The address and the pid keep it readable (which
// host, which process); the random part (32 bits from the kernel) keeps it unique when agents
// share both: containers with host networking or behind one NAT address, each running cpplaunch
// as PID 1. Should two agents of a job still present one id, the second to reach the store
// stops with NodeIdClashMessage (each backend checks it once, when it first connects). Pure: the
// random part comes in (launcher/multihost/host_info.h draws it).

#include <cstdint>
#include <string>

namespace cpplaunch {

struct NodeIdParts {
  int pid = 0;
  uint32_t random = 0;
};

// "_<pid>_<8 lower-case hex digits>": the part of the id known before the agent connects; the
// address (the route to the store, known once connected) goes in front with WithAddress.
std::string NodeIdSuffix(const NodeIdParts& parts);

// `addr` + `node_id` when `node_id` is only a suffix ("" or starting with '_'); a complete id
// (a test's, or one completed before) is returned unchanged.
std::string WithAddress(const std::string& node_id, const std::string& addr);

// The one line the second agent with an id stops with: "rendezvous failed on <where>: another
// agent of job '<run_id>' already joined as node <id> (...); start this agent again".
std::string NodeIdClashMessage(const std::string& run_id, const std::string& node_id,
                               const std::string& where);

}  // namespace cpplaunch
