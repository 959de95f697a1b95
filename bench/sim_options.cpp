#include "bench/sim_options.h"

#include <cstdio>
#include <cstdlib>

namespace cpplaunch {

void SimUsage(const std::string& why) {
  std::fprintf(stderr, "rendezvous_sim: %s\n", why.c_str());
  std::exit(2);
}

SimOptions ParseSimOptions(int argc, char** argv) {
  SimOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--port")
      o.port = std::atoi(v);
    else if (a == "--agents")
      o.agents = std::atoi(v);
    else if (a == "--total")
      o.total = std::atoi(v);
    else if (a == "--first-index")
      o.first_index = std::atoi(v);
    else if (a == "--processes")
      o.processes = std::atoi(v);
    else if (a == "--run-id")
      o.run_id = v;
    else if (a == "--channel")
      o.channel = std::atoi(v) != 0;
    else if (a == "--hold-s")
      o.hold_s = std::atof(v);
    else if (a == "--fail")
      o.fail = std::atoi(v);
    else if (a == "--store-pid")
      o.store_pid = std::atoi(v);
    else if (a == "--timeout-s")
      o.timeout_s = std::atof(v);
    else if (a == "--keep-alive-ms")
      o.keep_alive_ms = std::atoi(v);
    else if (a == "--backend")
      o.backend = v;
    else if (a == "--endpoints")
      o.endpoints = v;
    else if (a == "--request-timeout-s")
      o.request_timeout_s = std::atof(v);
    else if (a == "--etcd-gateway")
      o.etcd_gateway = std::atoi(v) != 0;
    else if (a == "--lose")
      o.lose = std::atoi(v);
    else if (a == "--spares")
      o.spares = std::atoi(v);
    else if (a == "--first-spare")
      o.first_spare = std::atoi(v);
    else if (a == "--count-requests")
      o.count_requests = std::atoi(v) != 0;
    else
      SimUsage("unknown option " + a);
  }
  if (argc % 2 == 0) SimUsage("every option takes a value");
  if (o.backend != "c10d" && o.backend != "etcd") SimUsage("--backend takes c10d or etcd");
  if (o.backend == "etcd") {
    if (o.endpoints.empty()) SimUsage("--backend etcd needs --endpoints H:P[,H:P...]");
    if (o.channel) SimUsage("--backend etcd simulates the rendezvous only (no --channel)");
    o.port = 1;  // unused: the agents reach etcd
  }
  if (o.port <= 0 || o.agents <= 0 || o.total < o.agents || o.run_id.empty() || o.processes <= 0 ||
      o.keep_alive_ms <= 0) {
    SimUsage("--port, --agents, --total (>= --agents), --run-id are required");
  }
  if (o.fail < 0 || o.fail > 2) SimUsage("--fail takes 0, 1 or 2");
  if (o.fail && !o.channel) SimUsage("--fail needs --channel 1");
  if (o.first_spare < 0) o.first_spare = o.total;
  if (o.spares < 0 || (o.spares > 0 && o.lose < 0))
    SimUsage("--spares takes a count and needs --lose");
  if (o.lose >= o.total) SimUsage("--lose takes a member's agent index, below --total");
  if (o.lose >= 0 && (!o.channel || o.fail)) SimUsage("--lose needs --channel 1 and no --fail");
  return o;
}

}  // namespace cpplaunch
