#include "launcher/agent/multi_host_job.h"

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>

#include "launcher/multihost/free_port.h"
#include "launcher/multihost/host_info.h"
#include "launcher/multihost/port_holder.h"
#include "launcher/multihost/start_store.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace {

// How long a local failure's teardown waits for its notice to reach the store. A COMPARE_SET
// on a live store takes milliseconds; this only bounds a store that does not answer.
constexpr std::chrono::milliseconds kPublishBeforeTeardown{1000};

MultiHostPlan Plan(boost::asio::io_context& io, const LaunchOptions& options,
                   const std::string& hostname, const StoreSecurity& security,
                   std::function<std::string(const std::string&)> status_address,
                   const std::function<void(const std::string&)>& trace) {
  std::string error;
  auto plan =
      PlanMultiHost(options, hostname, ThisAgentNodeIdParts(), IsLocalAddress, &error, security);
  if (!plan) throw std::runtime_error(error);
  // Every agent offers a port; group rank 0's is the one its rank-0 worker will use.
  if (plan->etcd) {
    // A fresh port before every round: the round's store host is only known after it.
    plan->etcd_settings.offer_store_port = [&io] { return FreeTcpPort(io); };
  } else if (options.worker_store == WorkerStore::kRank0) {
    plan->rendezvous.self.worker_store_port = FreeTcpPort(io);
  }
  plan->rendezvous.status_address = std::move(status_address);
  plan->rendezvous.trace = trace;
  plan->channel.trace = trace;
  return std::move(*plan);
}

bool IsWildcard(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

}  // namespace

MultiHostJob::MultiHostJob(boost::asio::io_context& io, const LaunchOptions& options,
                           const std::string& hostname, JobHooks hooks,
                           const StoreSecurity& security)
    : io_(io),
      hooks_(std::move(hooks)),
      max_restarts_(options.max_restarts),
      nproc_per_node_(options.nproc_per_node),
      worker_store_(options.worker_store),
      session_(io,
               Plan(
                   io, options, hostname, security,
                   [this](const std::string& addr) { return StatusAddress(addr); }, hooks_.debug),
               hooks_.say) {
  master_addr_ = session_.plan().store_host;
  master_port_ = session_.plan().store_port;
  if (session_.plan().etcd && options.rdzv_backend != "etcd-v3") {
    hooks_.say("--rdzv-backend=" + options.rdzv_backend +
               " is cpplaunch's etcd-v3 backend: etcd's v3 API with cpplaunch's own key layout "
               "(Python torchrun agents cannot join the same job)");
  }
}

// Static: node rank 0 hosts the store on --master-addr:--master-port. c10d: the agent told so
// by is_host, or whose host has the endpoint's address; when several agents share a host
// (tests on loopback), the first to bind hosts and the others join it as clients.
std::unique_ptr<StoreServer> MultiHostJob::HostStore() {
  const MultiHostPlan& plan = session_.plan();
  std::unique_ptr<StoreServer> store;
  if (plan.host_store && !plan.etcd) {
    try {
      store = StartStore(io_, master_addr_, master_port_, plan.store_port_option, hooks_.say,
                         nproc_per_node_, plan.security);
      master_port_ = store->port();
    } catch (const StoreBindError& e) {
      if (plan.host_forced || !plan.dynamic) throw;
      // With a secret, whatever holds the port is not trusted to be this job's store (issue 23).
      if (!plan.security.secret.empty() && e.address_in_use()) {
        throw StoreBindError(BusyStorePortRefusal(Endpoint{master_addr_, master_port_}.ToString(),
                                                  FindPortHolder(master_port_)),
                             true);
      }
      // Not the bind error's own advice (another port): sharing the store is the point here.
      hooks_.info((e.address_in_use() ? Endpoint{master_addr_, master_port_}.ToString() +
                                            " is taken, by another agent of this host as in a "
                                            "loopback test"
                                      : std::string(e.what())) +
                  "; joining the store there as a client");
    }
  }
  session_.set_hosts_store(store != nullptr);
  if (store) {
    hooks_.info("this host serves the job's store on " +
                Endpoint{master_addr_, master_port_}.ToString());
  }
  return store;
}

void MultiHostJob::AdvertiseStatus(const std::string& host, int port) {
  status_host_ = host;
  status_port_ = port;
}

// A wildcard listens on every address: the others reach it at this host's advertised one.
std::string MultiHostJob::StatusAddress(const std::string& addr) const {
  if (status_port_ == 0) return "";
  return Endpoint{IsWildcard(status_host_) ? addr : status_host_, status_port_}.ToString();
}

void MultiHostJob::Rendezvous(Ready ready, Ended ended) {
  if (round_store_) round_store_->Stop();  // the last round's workers are gone
  round_store_.reset();
  session_.JoinRound(
      next_round_,
      [this, ready, ended](const RendezvousResult& round) {
        // A signal that came while the round completed ends the job quietly.
        if (interrupted_by_ != 0) return ended("", ExitCode::kFailure);
        restart_count_ = round.restart_count;
        master_addr_ = round.master_addr;
        master_port_ = round.master_port;
        std::string error;
        auto layout = PlaceRankLayout(round.group_rank, round.group_world_size(), round.base_rank,
                                      round.self().local_world_size, round.world_size, &error);
        if (!layout) {
          OnAgentFailure("rank layout: " + error);
          return ended("error: rank layout: " + error, ExitCode::kFailure);
        }
        layout_ = *layout;
        hooks_.info("rendezvous round " + std::to_string(round.round) + " complete: node rank " +
                    std::to_string(round.group_rank) + " of " +
                    std::to_string(round.group_world_size()) + ", world size " +
                    std::to_string(layout_.world_size) + ", restart count " +
                    std::to_string(restart_count_));
        auto master = WorkerMaster(round, &error);
        if (!master || !HostRoundStore(round, &error)) {
          OnAgentFailure(error);
          return ended("error: " + error, ExitCode::kFailure);
        }
        stop_requested_ = false;
        session_.OpenChannel([this](const RoundEnd& end) { OnRoundEnd(end); });
        ready(Round{layout_, restart_count_, master->first, master->second, round.round,
                    round.members, round.set_aside});
      },
      [this, ended](const std::string& message, bool not_needed) {
        if (interrupted_by_ != 0) {
          return ended("rendezvous interrupted by " + SignalName(interrupted_by_) + "; exiting",
                       ExitCode::kFailure);
        }
        // A spare the job finished without did what it was started for.
        if (not_needed) return ended(message, ExitCode::kSuccess);
        ended("error: " + message, ExitCode::kFailure);
      });
}

// rank0: group rank 0's agent advertised its address and a free port in its node record.
std::optional<std::pair<std::string, int>> MultiHostJob::WorkerMaster(const RendezvousResult& round,
                                                                      std::string* error) const {
  // etcd: every agent offers a port each round; group rank 0's agent (or its worker rank 0)
  // hosts the round's workers' store there.
  if (session_.plan().etcd) return std::make_pair(round.master_addr, round.master_port);
  // Every host checks the members it knows (group rank 0 among them: a dynamic round lists only a
  // few), so every host that disagrees with group rank 0 fails, and its failure ends the round.
  const bool rank0 = worker_store_ == WorkerStore::kRank0;
  for (const RoundPeer& member : round.members) {
    const NodeInfo& node = member.node;
    if (rank0 == (node.worker_store_port != 0)) continue;
    *error = "hosts disagree about --worker-store: this host has " +
             std::string(rank0 ? "rank0" : "agent") + ", node rank " +
             std::to_string(member.group_rank) + " (" + node.Label() + ") has " +
             (rank0 ? "agent" : "rank0");
    return std::nullopt;
  }
  if (!rank0) return std::make_pair(master_addr_, master_port_);
  return std::make_pair(round.Member(0).node.addr, round.Member(0).node.worker_store_port);
}

bool MultiHostJob::HostRoundStore(const RendezvousResult& round, std::string* error) {
  if (!session_.plan().etcd || worker_store_ != WorkerStore::kAgent || round.group_rank != 0) {
    return true;
  }
  try {
    // The port is one this agent offered (a free one): "--master-port" is only a label here.
    round_store_ = StartStore(io_, round.master_addr, round.master_port, "--master-port",
                              hooks_.say, nproc_per_node_, session_.plan().security);
  } catch (const std::exception& e) {
    *error =
        "cannot host the workers' store of round " + std::to_string(round.round) + ": " + e.what();
    return false;
  }
  hooks_.info("this host serves the workers' store of round " + std::to_string(round.round) +
              " on " + Endpoint{round.master_addr, round.master_port}.ToString());
  return true;
}

// The attempt's first failure is this host's news for the others; it goes out the moment the
// worker exits, and the local teardown waits for it (BeforeFailureTeardown). Later exits are the
// teardown's doing, or came too late to be the root cause: the session publishes one notice per
// round.
void MultiHostJob::OnWorkerExit(const WorkerExitEvent& event) {
  if (event.exit.ok() || stop_requested_ || interrupted_by_ != 0 || session_.round_end()) return;
  RoundEnd notice = session_.Notice(RoundEndKind::kWorkerFailure);
  notice.rank = layout_.base_rank + event.id;
  notice.local_rank = event.id;
  notice.detail = event.exit.describe();
  session_.PublishEnd(notice);
}

void MultiHostJob::BeforeFailureTeardown(std::function<void()> proceed) {
  // Exactly once: on publication or at the bound, whichever comes first.
  auto timer = std::make_shared<boost::asio::steady_timer>(io_, kPublishBeforeTeardown);
  auto once = std::make_shared<std::function<void()>>(std::move(proceed));
  auto fire = [timer, once] {
    timer->cancel();
    if (auto f = std::exchange(*once, nullptr)) f();
  };
  timer->async_wait([fire](const boost::system::error_code& ec) {
    if (!ec) fire();
  });
  session_.WhenPublished(fire);
}

void MultiHostJob::OnSignal(int signo) {
  if (!session_.round_end()) {
    RoundEnd notice = session_.Notice(RoundEndKind::kAgentStopped);
    notice.detail = "received " + SignalName(signo);
    session_.PublishEnd(notice);
  }
  interrupted_by_ = signo;
}

void MultiHostJob::OnAgentFailure(const std::string& message) {
  RoundEnd notice = session_.Notice(RoundEndKind::kAgentStopped);
  notice.detail = message;
  session_.PublishEnd(notice);
}

// Published as the agent's own stop: the hang is no one worker's failure. The other hosts' agents
// see it while their workers are stalled too, and collect their stacks (agent.cpp).
void MultiHostJob::OnHang(const std::string& notice) {
  if (stop_requested_ || interrupted_by_ != 0 || session_.round_end()) return;
  RoundEnd end = session_.Notice(RoundEndKind::kAgentStopped);
  end.detail = notice;
  session_.PublishEnd(end);
}

bool MultiHostJob::IsMine(const RoundEnd& end) const {
  RoundEnd mine = session_.Notice(end.kind);
  return (end.kind == RoundEndKind::kWorkerFailure || end.kind == RoundEndKind::kAgentStopped) &&
         end.node_rank == mine.node_rank && end.host == mine.host && end.addr == mine.addr;
}

// The round ended somewhere (or this host lost the store): stop the local workers now. This
// host's own notices need no action: the supervisor is already tearing down.
void MultiHostJob::OnRoundEnd(const RoundEnd& end) {
  if (IsMine(end)) return;
  const std::string line =
      end.kind == RoundEndKind::kMembershipChange
          ? end.Describe() + "; stopping the workers for a new rendezvous round"
          : "stopping the workers: " + end.Describe();
  // Exits caused by this stop are not news for the others (exit callbacks never run inline).
  stop_requested_ = hooks_.stop_workers(line);
}

void MultiHostJob::Conclude(const AttemptResult& result, Decided decided) {
  if (EarlyDecision early = BeforeRoundEnd(result, interrupted_by_); early.decided) {
    return decided(early.decision);
  }
  if (result.outcome == AttemptOutcome::kSucceeded && !session_.round_end()) {
    hooks_.entered_exit_barrier();
    return session_.FinishJob([this, result, decided](FinishOutcome outcome) {
      if (outcome == FinishOutcome::kInterrupted && session_.round_end()) {
        return Decide(result, *session_.round_end(), decided);
      }
      decided(AfterExitBarrier(outcome, session_.plan().exit_barrier_timeout));
    });
  }
  if (result.root_failure && !session_.round_end()) {
    OnWorkerExit(result.exits[*result.root_failure].event);  // in case the tap missed it
  }
  session_.WhenEndKnown(
      [this, result, decided](const RoundEnd& end) { Decide(result, end, decided); });
}

void MultiHostJob::Decide(const AttemptResult& result, const RoundEnd& end,
                          const Decided& decided) {
  session_.CloseChannel();
  AttemptDecision decision = AfterRoundEnd(result, end, restart_count_, max_restarts_);
  if (decision.next == NextStep::kNextAttempt) {
    next_round_ = RoundTransition{session_.round().round, restart_count_, decision.consumes_restart,
                                  LostSeat(end), FailedSeat(end)};
  } else {
    // Late hosts of a dynamic job learn that it failed instead of waiting for a round.
    session_.CloseRendezvous("the job failed: " + end.Describe());
  }
  decided(decision);
}

void MultiHostJob::HangUp() {
  if (round_store_) round_store_->Stop();
  session_.CloseChannel();
  session_.CancelJoin();
}

}  // namespace cpplaunch
