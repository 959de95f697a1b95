#include "launcher/agent/elastic_event_log.h"

#include <utility>

#include "launcher/job/worker_specs.h"
#include "launcher/journal/slot_changes.h"

namespace cpplaunch {

ElasticEventLog::ElasticEventLog(const LaunchOptions& options, const EnvMap& env,
                                 ConsoleWriter& err, std::string run_id,
                                 std::shared_ptr<HostName> host,
                                 std::chrono::steady_clock::time_point started_at, bool watchdog)
    : options_(options),
      env_(env),
      err_(err),
      run_id_(std::move(run_id)),
      host_(std::move(host)),
      started_at_(started_at),
      watchdog_(watchdog) {}

template <class MakeEvent>
void ElasticEventLog::Record(MakeEvent make_event) {
  if (options_.event_log_handler == "console") err_.Write(make_event() + "\n");
}

void ElasticEventLog::OnAttemptStarting(const Round& round) {
  const Round previous = std::exchange(round_, round);
  // A restart within the same round (a single host) has no new slots.
  if (round.round != previous.round) {
    for (const SlotTaken& taken :
         CompareRounds(previous.hosts, previous.layout.group_world_size, round.hosts,
                       round.layout.group_world_size, round.set_aside)
             .taken) {
      Record([&] { return SlotTakenEvent(Facts(), round.round, taken); });
    }
  }
  if (watchdog_) Record([&] { return WatchdogEvent(Facts(), "watchdog started", nullptr); });
}

void ElasticEventLog::OnAttemptDone(const AttemptResult& /*result*/) {
  if (watchdog_) Record([&] { return WatchdogEvent(Facts(), "watchdog stopped", nullptr); });
}

void ElasticEventLog::OnAgentEnded(const AgentEnded& ended) {
  Record(
      [&] { return AgentStatusEvent(Facts(), ended.error ? "FAILED" : "SUCCEEDED", ended.error); });
}

void ElasticEventLog::OnWatchdogKill(const WatchdogKill& kill) {
  Record([&] { return WatchdogEvent(Facts(), "timer expired", &kill.expiry); });
  if (kill.delivered) {
    Record([&] { return WatchdogEvent(Facts(), "kill worker process", &kill.expiry); });
  }
}

EventContext ElasticEventLog::Facts() const {
  const std::string program = WorkerArgv(options_, env_, 0).front();
  return EventContext{
      .run_id = run_id_,
      .group_rank = round_.layout.group_rank,
      .group_world_size = round_.layout.group_world_size,
      .entry_point = program.substr(program.rfind('/') + 1),
      .role = options_.role,
      .hostname = host_->get(),
      .total_run_time = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now() - started_at_)
                            .count(),
      .rdzv_backend = options_.standalone ? "c10d" : options_.rdzv_backend,
      .agent_restarts = round_.restart_count,
  };
}

}  // namespace cpplaunch
