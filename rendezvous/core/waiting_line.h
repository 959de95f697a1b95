#pragma once
// The progress line a joining agent prints while a dynamic round waits for hosts, whatever holds
// the round's state (the c10d store or etcd). Pure.

#include <chrono>
#include <string>
#include <string_view>

#include "rendezvous/core/rendezvous_state.h"

namespace cpplaunch {

struct WaitingView {
  std::string_view run_id;
  std::string_view self_id;  // this agent's node id
  std::string_view where;    // "the store 10.0.0.1:29400", "etcd at h1:2379,h2:2379"
  std::chrono::milliseconds last_call_left{0};  // until state.last_call_deadline_ms
  std::chrono::steady_clock::duration join_left{};
  int joined = -1;  // participants in all when state's list is cut (StateSummary); -1: the list's
};

// "waiting for hosts of job 'j' (round 0, --nnodes=2:3) at <where>: 1 joined [a]; need 1 more
// to start; join timeout in 590 s".
std::string WaitingLine(const RendezvousState& state, const WaitingView& view);

}  // namespace cpplaunch
