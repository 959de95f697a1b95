#pragma once
// torchrun's torchelastic events (torch/distributed/elastic/events), one JSON text each, as
// torch serializes an Event (json.dumps(asdict(event))):
//   {"name": ..., "source": "AGENT", "timestamp": 0, "metadata": {...}}
// torch never sets the timestamp, so it is 0 there and here. The events that newest torchrun
// records to the --event-log-handler it was given: the agent's final status
// (launcher/api.py: SUCCEEDED when the agent's run returned, whether or not the workers
// succeeded; FAILED when it raised) and the file-timer watchdog's events
// (local_elastic_agent._log_watchdog_event). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "launcher/report/slot_taken.h"
#include "launcher/watchdog/timer_table.h"

namespace cpplaunch {

// What the agent puts in every event's metadata.
struct EventContext {
  std::string run_id;
  int group_rank = 0;
  int group_world_size = 0;
  std::string entry_point;  // the basename of the worker's program ("python3")
  std::string role;
  std::string hostname;
  std::int64_t total_run_time = 0;  // whole seconds the agent has run
  std::string rdzv_backend;
  int agent_restarts = 0;  // restarts used so far
};

// "torchelastic.worker.status.<state>" from the AGENT; raw_error is the failure's text.
std::string AgentStatusEvent(const EventContext& context, std::string_view state,
                             const std::optional<std::string>& raw_error);

// A watchdog event ("watchdog started", "timer expired", "kill worker process", "watchdog
// stopped"); `timer` names the timer the event is about, if any.
std::string WatchdogEvent(const EventContext& context, std::string_view name,
                          const TimerExpiry* timer);

// cpplaunch's own event (torch has no spares), in the same shape: at the start of round
// `round`, a host took a slot (slot_taken.h):
//   {"name": "cpplaunch.slot.taken", ..., "metadata": {..., "state": "INIT", ...,
//    "metadata": "{\"round\": 2, \"group_rank\": 1, \"host\": \"vm-e at 10.0.0.5\",
//    \"node_id\": ..., \"replaced\": ..., \"replaced_node_id\": ...,
//    \"replaced_set_aside\": true}"}}
// replaced and replaced_node_id are null for a new slot.
std::string SlotTakenEvent(const EventContext& context, std::int64_t round, const SlotTaken& taken);

}  // namespace cpplaunch
