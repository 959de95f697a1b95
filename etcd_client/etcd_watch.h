#pragma once
// A streaming watch (POST /v3/watch, a chunked stream of JSON lines) on a connection of its own.
// Part of the etcd client's interface (include rendezvous/etcd/etcd_client.h).
//
// Threads: the executor's thread (the client's). Callbacks run there, never inside a call, and a
// callback may destroy or Cancel() its own Watch.
// Failover: when the member streaming the watch goes away, the watch moves round the endpoint
// list by itself and resumes from the last revision it reported + 1, so the caller sees every
// event once, in order, and no gap. It ends (on_end) only when no endpoint accepts it within
// the client's request_timeout.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd {

class Client;

class Watch {
 public:
  struct State;
  explicit Watch(std::shared_ptr<State> state);
  ~Watch();  // Cancel()
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // Ends the watch: no callback runs after this, on_end included.
  void Cancel();
  // Why the watch ended ("" while it runs).
  const std::string& end_reason() const;
  // etcd's compact_revision when the watch ended because its start revision was compacted, else
  // 0. Re-read the keys (Range), then watch again from that read's revision + 1.
  int64_t compact_revision() const;
  // The revision after the last one the watch has delivered or was told about: where it would
  // resume.
  int64_t next_revision() const;

 private:
  std::shared_ptr<State> state_;
};

// Watches [key, range_end) (range_end as in Client::Range) from start_revision (0: from the
// next change on). on_events runs for each batch of events, in revision order. on_end runs
// once if the watch ends for any reason other than Cancel(), destruction or Client::Close():
// compacted (see compact_revision()), cancelled by etcd, or no endpoint reachable; `why` is one
// line. The watch starts connecting at once; events from start_revision on are delivered even
// if they happened before it was connected.
std::unique_ptr<Watch> StartWatch(Client& client, std::string key, std::string range_end,
                                  int64_t start_revision,
                                  std::function<void(const std::vector<WatchEvent>&)> on_events,
                                  std::function<void(const std::string& why)> on_end);

}  // namespace cpplaunch::etcd
