#pragma once
// rendezvous_sim's command line (bench/rendezvous_sim.cpp states what each option does).

#include <string>

namespace cpplaunch {

struct SimOptions {
  int port = 0;
  int agents = 0;
  int total = 0;
  int first_index = 0;
  int processes = 1;
  std::string run_id;
  bool channel = false;
  double hold_s = 0;
  int fail = 0;  // 0: no failure; 1: this process's agent 0 ends the round; 2: another's does
  int store_pid = 0;
  double timeout_s = 120;
  // --backend etcd: each etcd request's bound (ClientSettings::request_timeout); 0 keeps the
  // agent's own (5 s, or the join timeout when shorter).
  double request_timeout_s = 0;
  int keep_alive_ms = 5000;
  bool etcd_gateway = false;     // --backend etcd: etcd's JSON gateway instead of its gRPC
  std::string backend = "c10d";  // or "etcd"
  std::string endpoints;         // etcd's, "h:p,h:p"
  int lose = -1;                 // the member agent whose connection is closed, -1: none
  int spares = 0;                // spares this process simulates
  int first_spare = -1;          // their first agent index (-1: --total)
  bool count_requests = false;   // --lose: count the store requests of the replacement
};

// What every simulated agent offers (RendezvousSettings::max_restarts) and decides with
// (AfterRoundEnd): a lost host must cost a restart, not end the job.
constexpr int kSimMaxRestarts = 3;

// Says `why` on stderr, as rendezvous_sim's one line, and exits 2.
[[noreturn]] void SimUsage(const std::string& why);

// The options of argv; bad ones exit through SimUsage.
SimOptions ParseSimOptions(int argc, char** argv);

}  // namespace cpplaunch
