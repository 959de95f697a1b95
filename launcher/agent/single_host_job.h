#pragma once
// The job of a single-host run (--nnodes 1, --standalone, or a one-host c10d rendezvous): this
// agent is the whole world, hosts the store, and counts the restarts itself. See job.h.

#include <boost/asio/io_context.hpp>
#include <string>

#include "launcher/cli/options.h"
#include "launcher/job/job.h"
#include "launcher/multihost/store_security.h"

namespace cpplaunch {

class SingleHostJob final : public Job {
 public:
  // Resolves the store's endpoint and the run id from the options (newest torchrun's rules).
  // Throws std::runtime_error for a malformed --rdzv-endpoint.
  // `security`: the store's secret and allowed peers (store_security.h).
  SingleHostJob(boost::asio::io_context& io, const LaunchOptions& options, JobHooks hooks,
                StoreSecurity security = {});

  const std::string& run_id() const override { return run_id_; }
  std::string store_addr() const override { return master_addr_; }
  int store_port() const override { return master_port_; }
  std::unique_ptr<StoreServer> HostStore() override;
  void Rendezvous(Ready ready, Ended ended) override;
  void CancelRendezvous() override {}
  void OnWorkerExit(const WorkerExitEvent&) override {}
  void BeforeFailureTeardown(std::function<void()> proceed) override { proceed(); }
  void OnSignal(int signo) override { interrupted_by_ = signo; }
  void OnAgentFailure(const std::string&) override {}
  void OnHang(const std::string&) override {}
  void Conclude(const AttemptResult& result, Decided decided) override;
  bool LingersForPeers() const override { return false; }
  void HangUp() override {}

 private:
  boost::asio::io_context& io_;
  JobHooks hooks_;
  StoreSecurity security_;
  int nproc_per_node_;
  int max_restarts_;
  std::string run_id_;
  std::string master_addr_;
  int master_port_ = 0;
  std::string port_chosen_by_;  // StartStore's chosen_by: empty when the user chose no port
  WorkerStore worker_store_ = WorkerStore::kAgent;
  int restart_count_ = 0;
  int interrupted_by_ = 0;
};

}  // namespace cpplaunch
