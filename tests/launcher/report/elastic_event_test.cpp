#include "launcher/report/elastic_event.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

EventContext Context() {
  return EventContext{.run_id = "job7",
                      .group_rank = 1,
                      .group_world_size = 2,
                      .entry_point = "python3",
                      .role = "default",
                      .hostname = "node1.example",
                      .total_run_time = 12,
                      .rdzv_backend = "c10d",
                      .agent_restarts = 1};
}

}  // namespace

// The expected texts are what torch's Event(...).serialize() prints for the same values.
TEST_CASE("AgentStatusEvent is torch's serialized agent event", "[launcher][events]") {
  CHECK(AgentStatusEvent(Context(), "SUCCEEDED", std::nullopt) ==
        R"({"name": "torchelastic.worker.status.SUCCEEDED", "source": "AGENT", "timestamp": 0, )"
        R"("metadata": {"run_id": "job7", "global_rank": null, "group_rank": 1, )"
        R"("worker_id": null, "role": "default", "hostname": "node1.example", )"
        R"("state": "SUCCEEDED", "total_run_time": 12, "rdzv_backend": "c10d", )"
        R"("raw_error": null, "metadata": "{\"group_world_size\": 2, \"entry_point\": )"
        R"(\"python3\"}", "agent_restarts": 1, "duration_ms": null}})");
  const std::string failed = AgentStatusEvent(Context(), "FAILED", "received SIGTERM");
  CHECK(failed.find(R"("name": "torchelastic.worker.status.FAILED")") != std::string::npos);
  CHECK(failed.find(R"("raw_error": "received SIGTERM")") != std::string::npos);
}

TEST_CASE("WatchdogEvent is torch's serialized watchdog event", "[launcher][events]") {
  const TimerExpiry expiry{4242, "train.py#42", 9, 5, 1700000000.5};
  CHECK(WatchdogEvent(Context(), "timer expired", &expiry) ==
        R"({"name": "timer expired", "source": "AGENT", "timestamp": 0, )"
        R"("metadata": {"run_id": "job7", "global_rank": null, "group_rank": 1, )"
        R"("worker_id": null, "role": "default", "hostname": "node1.example", )"
        R"("state": "RUNNING", "total_run_time": 12, "rdzv_backend": "c10d", )"
        R"("raw_error": null, "metadata": "{\"watchdog_event\": \"timer expired\", )"
        R"(\"worker_pid\": \"4242\", \"scope_id\": \"train.py#42\", )"
        R"(\"expiration_time\": \"1700000000.5\", \"signal\": \"9\"}", "agent_restarts": 1}})");
  CHECK(WatchdogEvent(Context(), "watchdog started", nullptr)
            .find(R"("metadata": "{\"watchdog_event\": \"watchdog started\"}")") !=
        std::string::npos);
}

TEST_CASE("SlotTakenEvent names the round, the slot and both hosts", "[launcher][events]") {
  const SlotTaken spare{.group_rank = 1,
                        .host = "vm-e at 10.0.0.5",
                        .node_id = "10.0.0.5_7_00000001",
                        .replaced = "vm-b at 10.0.0.2",
                        .replaced_node_id = "10.0.0.2_7_00000002",
                        .replaced_set_aside = true};
  CHECK(SlotTakenEvent(Context(), 2, spare) ==
        R"({"name": "cpplaunch.slot.taken", "source": "AGENT", "timestamp": 0, )"
        R"("metadata": {"run_id": "job7", "global_rank": null, "group_rank": 1, )"
        R"("worker_id": null, "role": "default", "hostname": "node1.example", )"
        R"("state": "INIT", "total_run_time": 12, "rdzv_backend": "c10d", )"
        R"("raw_error": null, "metadata": "{\"round\": 2, \"group_rank\": 1, \"host\": )"
        R"(\"vm-e at 10.0.0.5\", \"node_id\": \"10.0.0.5_7_00000001\", )"
        R"(\"replaced\": \"vm-b at 10.0.0.2\", \"replaced_node_id\": \"10.0.0.2_7_00000002\", )"
        R"(\"replaced_set_aside\": true}", "agent_restarts": 1}})");
  SlotTaken grown;
  grown.group_rank = 2;
  grown.host = "vm-f at 10.0.0.6";
  grown.node_id = "f";
  CHECK(SlotTakenEvent(Context(), 3, grown)
            .find(R"(\"replaced\": null, \"replaced_node_id\": null, )"
                  R"(\"replaced_set_aside\": false)") != std::string::npos);
}

}  // namespace cpplaunch
