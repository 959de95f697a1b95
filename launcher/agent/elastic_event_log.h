#pragma once
// --event-log-handler=console as one of the agent's listeners: torchrun's StreamHandler prints
// each torchelastic event's JSON (elastic_event.h) on stderr: the watchdog's events (started and
// stopped with each attempt, a timer that expired and the kill it caused), cpplaunch's own
// "cpplaunch.slot.taken" for each host that took a slot in a new round of a multi-host job
// (slot_changes.h: a spare in a lost host's slot, or a new slot), and the agent's final
// status (SUCCEEDED when its run came to its end, whatever the workers did; FAILED when a signal
// or an error of its own ended it). null and dynamic_rendezvous (a NullHandler in torch too)
// print nothing.
//
// An event is built only when printed: its facts include the host's resolved name, a resolver
// call (possibly DNS) every job would otherwise pay for at its end.
// Threads: the agent's loop thread.

#include <chrono>
#include <memory>
#include <string>

#include "launcher/cli/options.h"
#include "launcher/job/agent_events.h"
#include "launcher/multihost/host_name.h"
#include "launcher/output/console_writer.h"
#include "launcher/report/elastic_event.h"
#include "launcher/watchdog/watchdog_kill.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

class ElasticEventLog final : public AgentListener {
 public:
  // `watchdog`: the file-timer watchdog runs (its events are recorded). `options`, `env` (the
  // agent's, read when an event is made) and `err` must outlive the log. `started_at`: when the
  // agent started (the events' total run time).
  ElasticEventLog(const LaunchOptions& options, const EnvMap& env, ConsoleWriter& err,
                  std::string run_id, std::shared_ptr<HostName> host,
                  std::chrono::steady_clock::time_point started_at, bool watchdog);

  void OnAttemptStarting(const Round& round) override;
  void OnAttemptDone(const AttemptResult& result) override;
  void OnAgentEnded(const AgentEnded& ended) override;
  // The watchdog's timer ran out: "timer expired", and "kill worker process" when it was sent.
  void OnWatchdogKill(const WatchdogKill& kill);

 private:
  template <class MakeEvent>
  void Record(MakeEvent make_event);
  EventContext Facts() const;

  const LaunchOptions& options_;
  const EnvMap& env_;
  ConsoleWriter& err_;
  std::string run_id_;
  std::shared_ptr<HostName> host_;
  std::chrono::steady_clock::time_point started_at_;
  bool watchdog_;
  Round round_;  // the latest attempt's (none yet: zeros)
};

}  // namespace cpplaunch
