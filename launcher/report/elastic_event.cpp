#include "launcher/report/elastic_event.h"

#include "base/python_json.h"

namespace cpplaunch {
namespace {

// The metadata members every agent event has, in torch's order, up to "raw_error".
PyJsonObject CommonMetadata(const EventContext& context, std::string_view state,
                            const std::optional<std::string>& raw_error) {
  PyJsonObject metadata;
  metadata.Add("run_id", context.run_id)
      .AddNull("global_rank")
      .Add("group_rank", context.group_rank)
      .AddNull("worker_id")
      .Add("role", context.role)
      .Add("hostname", context.hostname)
      .Add("state", state)
      .Add("total_run_time", context.total_run_time)
      .Add("rdzv_backend", context.rdzv_backend);
  if (raw_error) {
    metadata.Add("raw_error", *raw_error);
  } else {
    metadata.AddNull("raw_error");
  }
  return metadata;
}

std::string Event(std::string_view name, const PyJsonObject& metadata) {
  return PyJsonObject()
      .Add("name", name)
      .Add("source", "AGENT")
      .Add("timestamp", 0)
      .AddRaw("metadata", metadata.str())
      .str();
}

}  // namespace

std::string AgentStatusEvent(const EventContext& context, std::string_view state,
                             const std::optional<std::string>& raw_error) {
  // torch nests this as a JSON string inside the metadata.
  const std::string inner = PyJsonObject()
                                .Add("group_world_size", context.group_world_size)
                                .Add("entry_point", context.entry_point)
                                .str();
  PyJsonObject metadata = CommonMetadata(context, state, raw_error);
  metadata.Add("metadata", inner).Add("agent_restarts", context.agent_restarts);
  metadata.AddNull("duration_ms");
  return Event("torchelastic.worker.status." + std::string(state), metadata);
}

std::string WatchdogEvent(const EventContext& context, std::string_view name,
                          const TimerExpiry* timer) {
  PyJsonObject inner;
  inner.Add("watchdog_event", name);
  if (timer) {
    // torch writes these four as str() of the request's fields.
    inner.Add("worker_pid", std::to_string(timer->pid))
        .Add("scope_id", timer->scope_id)
        .Add("expiration_time", PyFloatRepr(timer->expiration_time))
        .Add("signal", std::to_string(timer->signal));
  }
  PyJsonObject metadata = CommonMetadata(context, "RUNNING", std::nullopt);
  metadata.Add("metadata", inner.str()).Add("agent_restarts", context.agent_restarts);
  return Event(name, metadata);
}

std::string SlotTakenEvent(const EventContext& context, std::int64_t round,
                           const SlotTaken& taken) {
  PyJsonObject inner;
  inner.Add("round", round)
      .Add("group_rank", taken.group_rank)
      .Add("host", taken.host)
      .Add("node_id", taken.node_id);
  if (taken.replaced_node_id.empty()) {
    inner.AddNull("replaced").AddNull("replaced_node_id");
  } else {
    inner.Add("replaced", taken.replaced).Add("replaced_node_id", taken.replaced_node_id);
  }
  inner.AddRaw("replaced_set_aside", taken.replaced_set_aside ? "true" : "false");
  PyJsonObject metadata = CommonMetadata(context, "INIT", std::nullopt);
  metadata.Add("metadata", inner.str()).Add("agent_restarts", context.agent_restarts);
  return Event("cpplaunch.slot.taken", metadata);
}

}  // namespace cpplaunch
