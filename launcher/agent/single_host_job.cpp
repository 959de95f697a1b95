#include "launcher/agent/single_host_job.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "base/random_run_id.h"
#include "launcher/multihost/free_port.h"
#include "launcher/multihost/start_store.h"
#include "launcher/multihost/store_endpoint.h"
#include "rendezvous/core/rendezvous.h"

namespace cpplaunch {

// --standalone and a one-host c10d rendezvous behave as newest torchrun: a fresh run id
// (standalone) and a free port unless one is given. An explicit port (or endpoint) is the
// user's choice, so a busy one is an error rather than a silent move.
SingleHostJob::SingleHostJob(boost::asio::io_context& io, const LaunchOptions& options,
                             JobHooks hooks, StoreSecurity security)
    : io_(io),
      hooks_(std::move(hooks)),
      security_(std::move(security)),
      nproc_per_node_(options.nproc_per_node),
      max_restarts_(options.max_restarts),
      run_id_(options.rdzv_id),
      master_addr_(options.master_addr),
      master_port_(options.master_port),
      port_chosen_by_(options.IsSet("--master-port") ? "--master-port" : ""),
      worker_store_(options.worker_store) {
  std::string error;
  if (options.standalone) {
    run_id_ = RandomRunId();
    master_addr_ = "127.0.0.1";
    master_port_ = 0;
    port_chosen_by_ = "--master-port";
    return;
  }
  auto store = ResolveStoreEndpoint(options, &error);
  if (!store) throw std::runtime_error(error);
  master_addr_ = store->host;
  master_port_ = store->port;
  if (store->from_rdzv_endpoint) port_chosen_by_ = store->port_option;
}

std::unique_ptr<StoreServer> SingleHostJob::HostStore() {
  auto store = StartStore(io_, master_addr_, master_port_, port_chosen_by_, hooks_.say,
                          nproc_per_node_, security_);
  master_port_ = store->port();
  return store;
}

void SingleHostJob::Rendezvous(Ready ready, Ended ended) {
  std::string error;
  auto layout = ComputeRankLayout(0, 1, nproc_per_node_, &error);
  if (!layout) return ended("error: rank layout: " + error, ExitCode::kFailure);
  int worker_port = master_port_;
  if (worker_store_ == WorkerStore::kRank0) {
    try {
      worker_port = FreeTcpPort(io_);  // a fresh one per attempt, as torchrun before 2.4
    } catch (const std::exception& e) {
      return ended(std::string("error: no free port for worker rank 0's store: ") + e.what(),
                   ExitCode::kFailure);
    }
  }
  ready(Round{.layout = std::move(*layout),
              .restart_count = restart_count_,
              .master_addr = master_addr_,
              .master_port = worker_port,
              .round = 0,
              .hosts = {},
              .set_aside = {}});
}

void SingleHostJob::Conclude(const AttemptResult& result, Decided decided) {
  AttemptDecision decision = AfterLocalAttempt(result, interrupted_by_, max_restarts_);
  if (decision.next == NextStep::kNextAttempt && decision.consumes_restart) ++restart_count_;
  decided(decision);
}

}  // namespace cpplaunch
