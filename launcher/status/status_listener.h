#pragma once
// The agent's status endpoint (--status-port; docs/status.md): a listener of the agent's events
// (launcher/job/agent_events.h) that keeps a JobStatus and serves it through a StatusServer on
// the agent's loop: /healthz, /readyz, /status (JSON), /metrics (Prometheus).
//
// Nothing runs while nobody asks: the events update a few fields, an output observer notes each
// rank's last line, and /proc is read only to answer a request (each running worker's RSS and
// its process tree's CPU time). Answers hold no secret, environment variable or command-line
// value; with a secret, other hosts' addresses need the proof (base/crypto/status_proof.h).
// Threads: the agent's loop thread.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "launcher/cli/options.h"
#include "launcher/hang/progress_rule.h"
#include "launcher/job/agent_events.h"
#include "launcher/multihost/host_name.h"
#include "launcher/report/agent_console.h"
#include "launcher/status/job_status.h"
#include "launcher/status/status_server.h"

namespace cpplaunch {

class StoreServer;

struct StatusSetup {
  boost::asio::io_context& io;
  const LaunchOptions& options;  // status_port is set
  AgentConsole& console;
  std::string run_id;
  std::shared_ptr<HostName> host;
  std::chrono::steady_clock::time_point started_at;  // when the agent started
  Job& job;                  // told where the endpoint is (the other hosts learn it)
  const StoreServer* store;  // the store this agent serves, or null; outlives the listener
  std::string secret;        // the agents' secret ("" = none)
};

class StatusListener final : public AgentListener {
 public:
  // Listens at once. Throws std::runtime_error (one line) when it cannot.
  explicit StatusListener(const StatusSetup& setup);

  // "127.0.0.1:8000": where it listens.
  std::string address() const;

  void OnAttemptStarting(const Round& round) override;
  void OnAttemptStarted(const AttemptStarted& started) override;
  void OnWorkerExit(const WorkerExitEvent& event) override;
  void OnAttemptDone(const AttemptResult& result) override;
  void OnDecision(const AttemptDecided& decided) override;
  void OnAgentEnded(const AgentEnded& ended) override;

 private:
  using Clock = std::chrono::steady_clock;
  StatusServer::Response Answer(const StatusServer::Request& request);
  RankStatus* RankOf(int local_rank);
  void OnOutput(int local_rank, std::string_view bytes);
  // Reads each running worker's RSS and CPU time; notes progress for /healthz.
  void Sample();
  void SampleStore();

  std::optional<std::chrono::milliseconds> hang_window_;
  std::shared_ptr<HostName> host_;
  const StoreServer* store_;
  std::string secret_;
  JobStatus status_;
  Clock::time_point rendezvous_began_;
  // Progress for /healthz (progress_rule.h), between the requests' samples.
  ProgressSample last_sample_;
  Clock::time_point last_sample_time_;
  Clock::time_point last_progress_;
  std::map<int, std::pair<Clock::time_point, std::uint64_t>> cpu_seen_;  // rank -> (when, ticks)
  std::unique_ptr<StatusServer> server_;
};

}  // namespace cpplaunch
