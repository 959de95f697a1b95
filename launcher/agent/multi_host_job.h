#pragma once
// The job of a multi-host run (--nnodes MAX > 1): rendezvous rounds through the store, the
// round's job channel (a local failure or signal ends the round for every host), the exit
// barrier after success, and the job-wide restart decisions. Built on MultiHostSession. See
// job.h.

#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>
#include <utility>

#include "launcher/cli/options.h"
#include "launcher/job/job.h"
#include "launcher/multihost/multi_host_session.h"

namespace cpplaunch {

class MultiHostJob final : public Job {
 public:
  // Plans this agent's part (PlanMultiHost) with the store's `security` (store_security.h).
  // Throws std::runtime_error for a malformed --rdzv-conf value or endpoint.
  MultiHostJob(boost::asio::io_context& io, const LaunchOptions& options,
               const std::string& hostname, JobHooks hooks, const StoreSecurity& security = {});

  const std::string& run_id() const override { return session_.plan().run_id; }
  std::string store_addr() const override { return master_addr_; }
  int store_port() const override { return master_port_; }
  std::unique_ptr<StoreServer> HostStore() override;
  void Rendezvous(Ready ready, Ended ended) override;
  void CancelRendezvous() override { session_.CancelJoin(); }
  void OnWorkerExit(const WorkerExitEvent& event) override;
  void BeforeFailureTeardown(std::function<void()> proceed) override;
  void OnSignal(int signo) override;
  void OnAgentFailure(const std::string& message) override;
  void OnHang(const std::string& notice) override;
  void Conclude(const AttemptResult& result, Decided decided) override;
  void AdvertiseStatus(const std::string& host, int port) override;
  bool LingersForPeers() const override { return true; }
  void HangUp() override;

 private:
  void OnRoundEnd(const RoundEnd& end);
  bool IsMine(const RoundEnd& end) const;
  void Decide(const AttemptResult& result, const RoundEnd& end, const Decided& decided);
  // MASTER_ADDR and MASTER_PORT of the round's workers; nullopt with *error when the hosts
  // disagree about --worker-store.
  std::optional<std::pair<std::string, int>> WorkerMaster(const RendezvousResult& round,
                                                          std::string* error) const;
  // etcd: group rank 0's agent hosts the round's workers' store on the port it offered, a new
  // one each round (no agent hosts a store for the whole job). Returns false with *error when
  // it cannot listen there.
  bool HostRoundStore(const RendezvousResult& round, std::string* error);
  // "host:port" of this agent's status endpoint as the others reach it ("" = none).
  std::string StatusAddress(const std::string& addr) const;

  boost::asio::io_context& io_;
  JobHooks hooks_;
  int max_restarts_;
  int nproc_per_node_;
  WorkerStore worker_store_;
  MultiHostSession session_;
  std::unique_ptr<StoreServer> round_store_;  // etcd, group rank 0: this round's workers' store
  std::string master_addr_;
  int master_port_ = 0;
  RankLayout layout_;
  int restart_count_ = 0;
  std::optional<RoundTransition> next_round_;  // how the last round ended
  int interrupted_by_ = 0;                     // the signal the agent received, if any
  bool stop_requested_ = false;  // this round's workers are stopped because another host asked
  std::string status_host_;      // AdvertiseStatus
  int status_port_ = 0;
};

}  // namespace cpplaunch
