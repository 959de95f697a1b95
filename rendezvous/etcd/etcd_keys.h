#pragma once
// Where one job's rendezvous lives in etcd: cpplaunch's own v3 key layout (docs/multi-host.md),
// not torchrun's v2 one. Pure.
//
//   <prefix>/<run_id>/state                 the round state (RendezvousState::Encode), written
//                                           only by a transaction on its mod_revision
//   <prefix>/<run_id>/summary               the state's summary (EncodeSummary), written with
//                                           every state: progress lines read it
//   <prefix>/<run_id>/join/<node id>        a queued join (EncodeJoinLine) on its agent's lease,
//                                           deleted by the write that applies it
//   <prefix>/<run_id>/inbox/<node id>/      what a queued agent hears, under one prefix that
//                                           it watches from its join until its round starts
//                                           (one watch, hence one connection through etcd's
//                                           gateway, per agent):
//       answer                              "<attempt> <answer>" (EncodeJoinAnswer)
//       epoch                               the summary as of the latest epoch step of the
//                                           round it was admitted to (last call, closing)
//       assign                              its assignment in the completed round, with its
//                                           peers' records (etcd_assignment.h)
//   <prefix>/<run_id>/admitter              the admitting agent's node id, on its lease
//   <prefix>/<run_id>/node/<node id>        an agent's record (NodeInfo::Encode) on the agent's
//                                           kept-alive lease: its presence is the agent's life
//   <prefix>/<run_id>/r<round>/end          the round's end (RoundEnd::Encode), created once
//   <prefix>/<run_id>/r<round>/barrier/<rank>  exit-barrier arrivals

#include <cstdint>
#include <string>
#include <string_view>

namespace cpplaunch {

// torchrun's legacy etcd backend uses /torchelastic/p2p; cpplaunch's layout differs, so its
// default prefix does too (a shared cluster then never mixes the two).
inline constexpr std::string_view kDefaultEtcdPrefix = "/cpplaunch/rdzv";

class EtcdKeys {
 public:
  // `prefix` as etcd_prefix gives it: trailing '/' are ignored, so "/a/" and "/a" are one.
  EtcdKeys(std::string_view prefix, std::string_view run_id);

  const std::string& Run() const { return run_; }  // "<prefix>/<run_id>/"
  std::string State() const;
  std::string Summary() const;
  std::string Joins() const;  // the prefix of every queued join
  std::string Join(std::string_view node_id) const;
  // The prefix of an agent's inbox; a node id holds no '/' (node_id.h), so no other agent's
  // inbox starts with it.
  std::string Inbox(std::string_view node_id) const;
  std::string Answer(std::string_view node_id) const;
  std::string EpochStep(std::string_view node_id) const;
  std::string Assignment(std::string_view node_id) const;
  std::string Admitter() const;
  std::string Nodes() const;  // the prefix of every node record
  std::string Node(std::string_view node_id) const;
  std::string Round(int64_t round) const;  // the prefix of the round's keys
  std::string End(int64_t round) const;
  std::string Barrier(int64_t round) const;  // the prefix of the round's arrivals
  std::string Arrival(int64_t round, int group_rank) const;
  // The node id of a node record's key; "" for any other key.
  std::string NodeIdOf(std::string_view key) const;
  // The etcdctl command that deletes every key of the run at `endpoints` ("h1:2379,h2:2379"),
  // for messages: a finished run's closed state refuses a new job with its run id.
  std::string ClearCommand(std::string_view endpoints) const;

 private:
  std::string run_;
};

}  // namespace cpplaunch
