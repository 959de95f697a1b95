#pragma once
// The value of a member's assignment key in the etcd rendezvous (etcd_keys.h: Assign): the
// member's RoundAssignment and, read when the round was published, the records of the peers it
// names. A member then starts its round on one read (its key) instead of two (its key, then its
// peers' records): at the completion every member reads at once, and through etcd's gateway each
// request costs the one member about half a millisecond. Pure.
//
//   <RoundAssignment::Encode()>
//   @records <revision> <count>\n
//   <length> <node id>\n<length bytes: the record>      (count times)
//
// `revision` is the one the records were read at: a record deleted after it (its lease expired)
// is seen by the round channel's watch from revision + 1, which replays the deletion. A peer
// without a record then is carried as absent, and the member ends the round before it starts.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/core/round_assignment.h"

namespace cpplaunch {

struct PublishedAssignment {
  RoundAssignment assignment;
  // The revision the records were read at; 0: the value carries none (read them).
  int64_t records_revision = 0;
  // Node id -> record value, for the assignment's peers whose record existed then.
  std::map<std::string, std::string> records;
  friend bool operator==(const PublishedAssignment&, const PublishedAssignment&) = default;
};

// `records` holds the value of every node record read at `revision`, by node id; the assignment's
// peers' are carried.
std::string EncodePublishedAssignment(const RoundAssignment& assignment, int64_t revision,
                                      const std::map<std::string, std::string>& records);
// A value without the records part (RoundAssignment::Encode alone) decodes with
// records_revision 0. Nullopt with *error (one line) when the value is malformed.
std::optional<PublishedAssignment> DecodePublishedAssignment(std::string_view value,
                                                             std::string* error);

}  // namespace cpplaunch
