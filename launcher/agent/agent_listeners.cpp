#include "launcher/agent/agent_listeners.h"

#include "launcher/agent/elastic_event_log.h"
#include "launcher/agent/failure_reporter.h"
#include "launcher/agent/loopback_listener.h"
#include "launcher/agent/store_refusal_note.h"
#include "launcher/agent/watchdog.h"
#include "launcher/journal/agent_log_file.h"
#include "launcher/journal/slot_change_note.h"
#include "launcher/status/status_listener.h"

namespace cpplaunch {

std::unique_ptr<AgentListeners> MakeAgentListeners(const ListenerSetup& setup) {
  auto listeners = std::make_unique<AgentListeners>();
  // First: agent.log opens before any other listener says a line.
  listeners->Add(std::make_unique<AgentLogFile>(setup.options, setup.logs, setup.console));
  auto events =
      std::make_unique<ElasticEventLog>(setup.options, setup.env, setup.console.err(), setup.run_id,
                                        setup.host, setup.started_at, Watchdog::Enabled(setup.env));
  ElasticEventLog* event_log = events.get();  // owned by `listeners`, as the watchdog is
  std::unique_ptr<Watchdog> watchdog =
      Watchdog::Start(setup.io, setup.env, setup.console,
                      [event_log](const WatchdogKill& kill) { event_log->OnWatchdogKill(kill); });
  const Watchdog* watchdog_view = watchdog.get();
  listeners->Add(std::move(events));
  if (watchdog) listeners->Add(std::move(watchdog));
  listeners->Add(std::make_unique<FailureReporter>(setup.options, setup.env, setup.console,
                                                   setup.logs, watchdog_view));
  listeners->Add(
      std::make_unique<LoopbackListener>(setup.env, setup.console, setup.logs, setup.host));
  listeners->Add(std::make_unique<StoreRefusalNote>(setup.store, setup.console));
  listeners->Add(std::make_unique<SlotChangeNote>(setup.console));
  if (setup.options.status_port) {
    listeners->Add(std::make_unique<StatusListener>(StatusSetup{
        .io = setup.io,
        .options = setup.options,
        .console = setup.console,
        .run_id = setup.run_id,
        .host = setup.host,
        .started_at = setup.started_at,
        .job = setup.job,
        .store = setup.store,
        .secret = setup.secret,
    }));
  }
  return listeners;
}

}  // namespace cpplaunch
