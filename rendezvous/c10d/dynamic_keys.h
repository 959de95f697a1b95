#pragma once
// Where one job's c10d rendezvous (dynamic_rendezvous.h) lives in the agents' store: its key
// layout, below rendezvous_keys::Base(run_id) ("cpplaunch/<run_id>/"). Pure.
//
//   dynamic/state                  the round state (RendezvousState::Encode), COMPARE_SET only
//   dynamic/version/<v>            set after the write of version v: wakes every waiter
//   dynamic/epoch/<e>              set after the write that started epoch e: wakes participants
//   dynamic/summary                the state without its lists, as of the latest epoch
//   dynamic/ticket, passed, turn/<t>  the write turn (write_turn.h)
//   dynamic/node/<id>              an agent's record (NodeInfo::Encode)
//   dynamic/alive/<id>             its liveness key, owned by the agent's connection
//   dynamic/queue, queued, admitted  the join queue (join_queue.h), its lines and those applied
//   dynamic/admitter               the admission role, owned by the admitting host's connection
//   dynamic/answer/<id>/<attempt>  a queued join's answer
//   r<round>/assign/<id>           a member's assignment (round_assignment.h)
//   r<round>/assign_publisher      claimed by the host publishing the assignments
//   r<round>/former                claimed by the survivor forming a hot-spare replacement round
//   r<round>/formed                set once it decided (dynamic_rendezvous_replace.cpp)

#include <cstdint>
#include <string>

namespace cpplaunch {

class DynamicKeys {
 public:
  explicit DynamicKeys(const std::string& run_id);

  std::string State() const;
  std::string Version(int64_t version) const;
  std::string Epoch(int64_t epoch) const;
  std::string Summary() const;
  std::string Ticket() const;
  std::string Passed() const;  // how many turns were passed
  std::string Turn(int64_t ticket) const;
  std::string Node(const std::string& node_id) const;
  std::string Alive(const std::string& node_id) const;
  std::string Queue() const;
  std::string QueuedCount() const;    // lines appended to the queue
  std::string AdmittedCount() const;  // lines applied (as last written)
  std::string Admitter() const;
  std::string Answer(const std::string& node_id, int64_t attempt) const;
  std::string Assign(int64_t round, const std::string& node_id) const;
  std::string Publisher(int64_t round) const;
  std::string Former(int64_t round) const;
  std::string Formed(int64_t round) const;

 private:
  std::string run_id_;
  std::string base_;  // "cpplaunch/<run_id>/dynamic/"
};

}  // namespace cpplaunch
