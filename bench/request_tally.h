#pragma once
// What rendezvous_sim --count-requests counts: the store requests the simulated agents' trace
// lines say were answered (StoreConnection's "store: <COMMAND> '<key>' ... answered in N us"),
// by kind, and when the first and the last of each kind were answered: where a phase of the
// simulation spends its time. A kind is the command and its first key with the run's prefix cut
// and every run of digits but a round's written '#' ("WAIT 'r1/end'", "CLAIM
// 'dynamic/alive/sim#'"), so that N agents' requests of one step count as one kind. Not
// thread-safe; the simulation's one thread calls it.

#include <cstdint>
#include <map>
#include <string>

namespace cpplaunch {

class RequestTally {
 public:
  explicit RequestTally(std::string run_id) : run_id_(std::move(run_id)) {}

  // Counts `trace_line` at `now_ns` (CLOCK_MONOTONIC) when it is a store request's; ignores
  // any other line.
  void Count(const std::string& trace_line, int64_t now_ns);

  // ,"requests":{"<kind>":[count,first ms,last ms],...}: times in ms after `t0_ns`.
  std::string Json(int64_t t0_ns) const;

 private:
  struct Kind {
    int64_t count = 0, first_ns = 0, last_ns = 0;
  };
  std::string run_id_;
  std::map<std::string, Kind> kinds_;
};

}  // namespace cpplaunch
