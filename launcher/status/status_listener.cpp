#include "launcher/status/status_listener.h"

#include <unistd.h>

#include <algorithm>

#include "base/crypto/status_proof.h"
#include "launcher/diagnosis/proc_reader.h"
#include "launcher/status/health_rule.h"
#include "launcher/status/metrics_text.h"
#include "rendezvous/core/node_info.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch {
namespace {

double UnixSeconds(std::chrono::system_clock::time_point when) {
  return std::chrono::duration<double>(when.time_since_epoch()).count();
}
double UnixNow() { return UnixSeconds(std::chrono::system_clock::now()); }

std::string Backend(const LaunchOptions& options) {
  if (options.max_nodes <= 1) return "none";
  if (options.rdzv_backend.rfind("etcd", 0) == 0) return "etcd-v3";
  return options.rdzv_backend;
}

StatusServer::Response Text(unsigned status, std::string line) {
  return {status, "text/plain; charset=utf-8", std::move(line) + "\n"};
}

const char* const kIndex =
    "cpplaunch agent: GET /healthz (liveness), /readyz (readiness), /status (JSON), "
    "/metrics (Prometheus)";

}  // namespace

StatusListener::StatusListener(const StatusSetup& setup)
    : hang_window_(setup.options.hang_timeout),
      host_(setup.host),
      store_(setup.store),
      secret_(setup.secret),
      rendezvous_began_(Clock::now()) {
  status_.pid = static_cast<int>(::getpid());
  status_.run_id = setup.run_id;
  status_.backend = Backend(setup.options);
  status_.nnodes = NnodesText(setup.options.min_nodes, setup.options.max_nodes);
  status_.max_restarts = setup.options.max_restarts;
  status_.agent_started_at =
      UnixNow() - std::chrono::duration<double>(Clock::now() - setup.started_at).count();
  rendezvous_began_ = setup.started_at;
  server_ = std::make_unique<StatusServer>(
      setup.io, setup.options.status_addr, *setup.options.status_port,
      [this](const StatusServer::Request& request) { return Answer(request); });
  status_.status_address = Endpoint{setup.options.status_addr, server_->port()}.ToString();
  setup.job.AdvertiseStatus(setup.options.status_addr, server_->port());
  // A free port (0) must be told; a chosen one only at LOGLEVEL=INFO.
  const std::string line = "status endpoint on http://" + status_.status_address +
                           "/ (/healthz /readyz /status /metrics)";
  if (*setup.options.status_port == 0) {
    setup.console.Say(line);
  } else {
    setup.console.Info(line);
  }
}

std::string StatusListener::address() const { return status_.status_address; }

void StatusListener::OnAttemptStarting(const Round& round) {
  const auto now = Clock::now();
  status_.rendezvous_seconds.push_back(
      std::chrono::duration<double>(now - rendezvous_began_).count());
  status_.phase = AgentPhase::kRendezvous;
  status_.restarts_used = round.restart_count;
  status_.round = round.round;
  status_.placed = true;
  status_.group_rank = round.layout.group_rank;
  status_.group_world_size = round.layout.group_world_size;
  status_.world_size = round.layout.world_size;
  status_.base_rank = round.layout.base_rank;
  status_.local_world_size = round.layout.local_world_size;
  status_.hosts.clear();
  for (const RoundPeer& peer : round.hosts) {
    status_.hosts.push_back(HostStatus{peer.group_rank, peer.node.hostname, peer.node.addr,
                                       peer.node.status,
                                       peer.group_rank == round.layout.group_rank});
  }
  if (round.hosts.empty()) {  // a single host: this one
    status_.hosts.push_back(HostStatus{0, host_->get(), "", status_.status_address, true});
  }
  status_.ranks.clear();
}

void StatusListener::OnAttemptStarted(const AttemptStarted& started) {
  status_.phase = AgentPhase::kRunning;
  const double at = UnixSeconds(started.started);
  for (const LiveWorker& worker : started.workers) {
    RankStatus rank;
    rank.local_rank = worker.id;
    rank.rank = status_.base_rank + worker.id;
    rank.pid = static_cast<int>(worker.pid);
    rank.started_at = at;
    status_.ranks.push_back(rank);
  }
  std::sort(status_.ranks.begin(), status_.ranks.end(),
            [](const RankStatus& a, const RankStatus& b) { return a.local_rank < b.local_rank; });
  last_sample_ = {};
  last_sample_time_ = last_progress_ = Clock::now();
  cpu_seen_.clear();
  if (started.output != nullptr) {
    started.output->Observe([this](int local_rank, bool /*is_stderr*/, std::string_view bytes) {
      OnOutput(local_rank, bytes);
    });
  }
}

void StatusListener::OnOutput(int local_rank, std::string_view bytes) {
  RankStatus* rank = RankOf(local_rank);
  if (rank == nullptr) return;
  rank->last_output_at = UnixNow();
  rank->output_lines += static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
}

RankStatus* StatusListener::RankOf(int local_rank) {
  for (RankStatus& rank : status_.ranks) {
    if (rank.local_rank == local_rank) return &rank;
  }
  return nullptr;
}

void StatusListener::OnWorkerExit(const WorkerExitEvent& event) {
  RankStatus* rank = RankOf(event.id);
  if (rank == nullptr) return;
  rank->state = event.exit.ok() ? RankState::kSucceeded : RankState::kFailed;
  if (event.exit.signaled()) {
    rank->signal = SignalName(event.exit.signal());
  } else {
    rank->exit_code = event.exit.code();
  }
  rank->rss_bytes.reset();
  rank->cpu_share.reset();
}

void StatusListener::OnAttemptDone(const AttemptResult& result) {
  status_.phase = AgentPhase::kConcluding;
  for (const ExitRecord& exit : result.exits) {
    RankStatus* rank = RankOf(exit.event.id);
    if (rank != nullptr && exit.role == ExitRole::kStopped) rank->state = RankState::kStopped;
  }
}

void StatusListener::OnDecision(const AttemptDecided& decided) {
  const double now = UnixNow();
  const FailureRecord* cause = nullptr;
  if (decided.failures != nullptr) {
    for (const FailureRecord& record : decided.failures->records) {
      if (RankStatus* rank = RankOf(record.local_rank)) {
        rank->reason = record.reason.empty() ? record.exit.describe() : record.reason;
      }
      if (cause == nullptr || (cause->killed_by_teardown && !record.killed_by_teardown)) {
        cause = &record;
      }
    }
  }
  if (cause != nullptr) {
    status_.last_failure =
        FailureStatus{cause->global_rank,
                      cause->local_rank,
                      status_.group_rank,
                      host_->get(),
                      cause->reason.empty() ? cause->exit.describe() : cause->reason,
                      UnixSeconds(cause->time)};
  } else if (decided.result.outcome == AttemptOutcome::kStopped &&
             !decided.decision.message.empty()) {
    // Another host ended the round; the decision's line says why.
    status_.last_failure = FailureStatus{-1, -1, -1, "", decided.decision.message, now};
  }
  if (decided.decision.next == NextStep::kNextAttempt) {
    status_.phase = AgentPhase::kRendezvous;
    rendezvous_began_ = Clock::now();
  }
}

void StatusListener::OnAgentEnded(const AgentEnded& /*ended*/) {
  status_.phase = AgentPhase::kDone;
  // The agent's loop ends when nothing is pending: the acceptor must not keep it turning.
  server_->Stop();
}

void StatusListener::Sample() {
  static const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  static const long page_bytes = ::sysconf(_SC_PAGESIZE);
  const auto now = Clock::now();
  ProgressSample sample;
  for (RankStatus& rank : status_.ranks) {
    sample.output_lines += rank.output_lines;
    if (rank.state != RankState::kRunning) continue;
    if (auto stat = ReadProcStat(rank.pid)) {
      rank.rss_bytes = stat->rss_pages * static_cast<std::uint64_t>(page_bytes);
    }
    const auto ticks = TreeCpuTicks(rank.pid);
    if (!ticks) continue;
    sample.cpu_ticks[rank.local_rank] = *ticks;
    rank.cpu_seconds = static_cast<double>(*ticks) / static_cast<double>(ticks_per_second);
    auto [seen, fresh] = cpu_seen_.try_emplace(rank.local_rank, last_sample_time_, 0);
    const double elapsed = std::chrono::duration<double>(now - seen->second.first).count();
    if (elapsed > 0) {
      rank.cpu_share = static_cast<double>(*ticks - std::min(*ticks, seen->second.second)) /
                       static_cast<double>(ticks_per_second) / elapsed;
    }
    seen->second = {now, *ticks};
  }
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - last_sample_time_);
  if (status_.phase == AgentPhase::kRunning &&
      Progressed(last_sample_, sample, elapsed, ticks_per_second)) {
    last_progress_ = now;
  }
  last_sample_ = std::move(sample);
  last_sample_time_ = now;
  SampleStore();
}

void StatusListener::SampleStore() {
  if (store_ == nullptr) return;
  const StoreCounters counters = store_->counters();
  status_.store =
      StoreFigures{counters.requests,          counters.refused,
                   store_->connection_count(), store_->key_count() + store_->agent_key_count(),
                   store_->budget().used(),    store_->budget().limits().total_bytes};
}

StatusServer::Response StatusListener::Answer(const StatusServer::Request& request) {
  const std::string_view path = request.target.substr(0, request.target.find('?'));
  if (status_.hostname.empty()) status_.hostname = host_->get();
  if (path == "/healthz") {
    Sample();
    const auto stalled =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_progress_);
    const HealthAnswer health = Liveness(status_, hang_window_, stalled);
    return Text(health.ok ? 200 : 503, health.line);
  }
  if (path == "/readyz") {
    const HealthAnswer ready = Readiness(status_);
    return Text(ready.ok ? 200 : 503, ready.line);
  }
  if (path == "/status") {
    Sample();
    const auto now = static_cast<std::int64_t>(UnixNow());
    const bool proven = secret_.empty() || CheckStatusProof(secret_, request.proof, now, path);
    return {200, "application/json", StatusJson(status_, UnixNow(), proven)};
  }
  if (path == "/metrics") {
    Sample();
    return {200, "text/plain; version=0.0.4; charset=utf-8", MetricsText(status_, UnixNow())};
  }
  if (path == "/") return Text(200, kIndex);
  return Text(404, "not found: " + std::string(path.substr(0, 64)) + "; " + kIndex);
}

}  // namespace cpplaunch
