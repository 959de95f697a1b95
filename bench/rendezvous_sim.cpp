// Rendezvous at scale by simulation: many agents in one process, each running the agent's real
// rendezvous code (DynamicRendezvous, then a JobChannel, as multi_host_session uses them) with
// its own real connections to one real store (cpplaunch-store, started by the harness).
//
//   rendezvous_sim --port P --agents K --total N --run-id ID [--first-index I] [--processes Q]
//                  [--channel 0|1] [--hold-s S] [--fail 0|1|2] [--store-pid PID]
//                  [--timeout-s T] [--keep-alive-ms MS]
//   rendezvous_sim --backend etcd --endpoints H:P[,H:P...] --agents K --total N --run-id ID
//                  [--first-index I] [--store-pid ETCD_PID] [--timeout-s T]
//
// This process simulates agents I .. I+K-1 of an N-agent job (--nnodes=N); Q processes share the
// job. Every agent calls Next() at once; each reaches the store (listening on every address) at
// its own loopback address, 127.2.x.y, so that the connections of thousands of agents do not
// share one address pair, whose ephemeral ports Linux scans on every connect (bench/store_load
// explains why); hosts of a real job have distinct addresses too.
// With --channel 1, every agent then opens its round's JobChannel (on its rendezvous' connection),
// and the Q processes meet at a store barrier. --hold-s keeps the channels running (heartbeats at
// --keep-alive-ms, default torchrun's 5 s) while the store's CPU is sampled from /proc/PID/stat.
// --fail 1 (the process holding agent 0): agent 0 ends the round with a worker-failure notice
// and every agent's end handler is timed; --fail 2: another process's agent ends it, this
// process's handlers are timed.
// With --backend etcd, every agent runs the etcd backend's real EtcdRendezvous with its own
// EtcdLink (bench/etcd_sim_agent.h) against the etcd cluster at --endpoints; the rendezvous only
// (no --channel), and the store_cpu_* fields are the CPU of --store-pid, the etcd member.
// Output: one JSON object on stdout; times are CLOCK_MONOTONIC nanoseconds, comparable between
// the processes of one run. Exit status 1 when any agent failed or timed out, 2 on bad usage.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/asio_coroutine.h"
#include "launcher/process/posix_sys.h"
// Asio after asio_coroutine.h (see there).
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "bench/etcd_sim_agent.h"
#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "rendezvous/c10d/job_channel.h"
#include "rendezvous/store/client/async_store_client.h"

namespace cpplaunch {
namespace {
namespace asio = boost::asio;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Options {
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
  int keep_alive_ms = 5000;
  std::string backend = "c10d";  // or "etcd"
  std::string endpoints;         // etcd's, "h:p,h:p"
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "rendezvous_sim: %s\n", why.c_str());
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
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
    else
      Usage("unknown option " + a);
  }
  if (argc % 2 == 0) Usage("every option takes a value");
  if (o.backend != "c10d" && o.backend != "etcd") Usage("--backend takes c10d or etcd");
  if (o.backend == "etcd") {
    if (o.endpoints.empty()) Usage("--backend etcd needs --endpoints H:P[,H:P...]");
    if (o.channel) Usage("--backend etcd simulates the rendezvous only (no --channel)");
    o.port = 1;  // unused: the agents reach etcd
  }
  if (o.port <= 0 || o.agents <= 0 || o.total < o.agents || o.run_id.empty() || o.processes <= 0 ||
      o.keep_alive_ms <= 0) {
    Usage("--port, --agents, --total (>= --agents), --run-id are required");
  }
  if (o.fail < 0 || o.fail > 2) Usage("--fail takes 0, 1 or 2");
  if (o.fail && !o.channel) Usage("--fail needs --channel 1");
  return o;
}

// user+system CPU seconds of `pid` (0: none).
double CpuSeconds(int pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// One simulated host.
struct Agent {
  int index = 0;
  std::unique_ptr<DynamicRendezvous> rendezvous;
  std::unique_ptr<EtcdSimAgent> etcd;  // --backend etcd: instead of `rendezvous`
  std::unique_ptr<JobChannel> channel;
  RendezvousResult round;
  int64_t joined_ns = 0;   // Next() started
  int64_t holding_ns = 0;  // Next() returned the round
  int64_t told_ns = 0;     // the channel's end handler ran
  bool channel_ready = false;
  std::string error;
};

// 127.2.0.0 + index: the store's address as this simulated host dials it.
std::string StoreAddressFor(int index) {
  return "127.2." + std::to_string((index >> 8) & 0xff) + "." + std::to_string(index & 0xff);
}

RendezvousSettings SettingsFor(const Options& o, int index) {
  RendezvousSettings s;
  s.run_id = o.run_id;
  s.min_nodes = s.max_nodes = o.total;
  s.store_host = StoreAddressFor(index);
  s.store_port = o.port;
  s.master_addr = "127.0.0.1";
  s.master_port = o.port;
  s.join_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  s.read_timeout = s.join_timeout;
  s.self.node_id = "sim" + std::to_string(index);
  s.self.addr = "10." + std::to_string(index >> 16) + "." + std::to_string((index >> 8) & 0xff) +
                "." + std::to_string(index & 0xff);
  s.self.hostname = "sim-host-" + std::to_string(index);
  s.self.local_world_size = 1;
  s.self.nnodes_min = s.self.nnodes_max = o.total;
  return s;
}

JobChannel::Settings ChannelSettings(const Options& o, int index) {
  JobChannel::Settings s;
  s.run_id = o.run_id;
  s.store_host = StoreAddressFor(index);
  s.store_port = o.port;
  s.keep_alive_interval = std::chrono::milliseconds(o.keep_alive_ms);
  s.read_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  return s;
}

EtcdSettings EtcdSettingsFor(const Options& o) {
  std::string error;
  auto settings = EtcdSimSettings(
      o.endpoints, std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000)), &error);
  if (!settings) Usage(error);
  return *settings;
}

class Simulation {
 public:
  explicit Simulation(const Options& o) : o_(o), timer_(io_) {
    for (int i = 0; i < o.agents; ++i) {
      auto a = std::make_unique<Agent>();
      a->index = o.first_index + i;
      if (o.backend == "etcd") {
        a->etcd = std::make_unique<EtcdSimAgent>(io_.get_executor(), SettingsFor(o, a->index),
                                                 EtcdSettingsFor(o));
      } else {
        a->rendezvous =
            std::make_unique<DynamicRendezvous>(io_.get_executor(), SettingsFor(o, a->index));
      }
      agents_.push_back(std::move(a));
    }
  }

  int Run() {
    asio::co_spawn(io_, Main(), [this](std::exception_ptr e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& error) {
          fatal_ = error.what();
        }
      }
      io_.stop();
    });
    io_.run();
    return Report();
  }

 private:
  using Task = asio::awaitable<void>;

  Task Sleep(std::chrono::milliseconds d) {
    timer_.expires_after(d);
    co_await timer_.async_wait(asio::use_awaitable);
  }

  // Polls a counter of this process's agents every 1 ms: the simulation's own bookkeeping, not
  // the code under test (whose waits are all store events).
  template <class Pred>
  Task Until(Pred done, int64_t deadline_ns) {
    while (!done() && NowNs() < deadline_ns) co_await Sleep(std::chrono::milliseconds(1));
  }

  int64_t Deadline() const { return NowNs() + static_cast<int64_t>(o_.timeout_s * 1e9); }

  Task Join(Agent& a) {
    a.joined_ns = NowNs();
    try {
      Rendezvous& rendezvous = a.etcd ? a.etcd->rendezvous() : *a.rendezvous;
      a.round = co_await rendezvous.Next(std::nullopt);
      a.holding_ns = NowNs();
    } catch (const std::exception& e) {
      a.error = e.what();
    }
    ++finished_;
  }

  Task OpenChannel(Agent& a) {
    a.channel = std::make_unique<JobChannel>(
        io_.get_executor(), ChannelSettings(o_, a.index), a.round,
        [this, &a](const RoundEnd&) {
          a.told_ns = NowNs();
          ++told_;
        },
        *a.rendezvous->connection());
    try {
      co_await a.channel->Start();
      a.channel_ready = true;
    } catch (const std::exception& e) {
      a.error = std::string("job channel: ") + e.what();
    }
    ++finished_;
  }

  // Every process of the run arrives before any goes on (one barrier key per name).
  Task Barrier(const std::string& name) {
    const auto deadline = AsyncStoreClient::Clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(o_.timeout_s * 1000));
    if (!control_) {
      control_ = std::make_unique<AsyncStoreClient>(
          io_.get_executor(), AsyncStoreClient::Options::Agent(std::chrono::seconds(60), ""));
      co_await control_->Connect("127.0.0.1", o_.port, deadline);
    }
    const std::string key = "sim/" + o_.run_id + "/" + name;
    if (co_await control_->Add(key, 1) == o_.processes) co_await control_->Set(key + "/go", "");
    std::vector<std::string> keys{key + "/go"};
    co_await control_->Wait(std::move(keys),
                            std::chrono::milliseconds(static_cast<int64_t>(o_.timeout_s * 1000)));
  }

  Task Main() {
    store_cpu_start_ = CpuSeconds(o_.store_pid);
    for (auto& a : agents_) asio::co_spawn(io_, Join(*a), asio::detached);
    co_await Until([this] { return finished_ == o_.agents; }, Deadline() + 10'000'000'000);
    store_cpu_held_ = CpuSeconds(o_.store_pid);
    if (!o_.channel || Failed() > 0) co_return;
    finished_ = 0;
    for (auto& a : agents_) asio::co_spawn(io_, OpenChannel(*a), asio::detached);
    co_await Until([this] { return finished_ == o_.agents; }, Deadline());
    if (Failed() > 0) co_return;
    co_await Barrier("channels");
    if (o_.hold_s > 0) {
      hold_cpu0_ = CpuSeconds(o_.store_pid);
      hold_t0_ = NowNs();
      co_await Sleep(std::chrono::milliseconds(static_cast<int64_t>(o_.hold_s * 1000)));
      hold_cpu1_ = CpuSeconds(o_.store_pid);
      hold_t1_ = NowNs();
      ended_during_hold_ = told_;
      co_await Barrier("held");
    }
    if (!o_.fail && told_ == 0) co_return;
    if (o_.fail == 1) {
      co_await Sleep(std::chrono::milliseconds(100));  // every process's WAITs are in place
      RoundEnd notice;
      notice.kind = RoundEndKind::kWorkerFailure;
      notice.host = agents_.front()->round.self().hostname;
      notice.node_rank = agents_.front()->round.group_rank;
      notice.rank = notice.node_rank;
      notice.detail = "exitcode 1 (simulated)";
      fail_ns_ = NowNs();
      co_await agents_.front()->channel->EndRound(notice);
    }
    co_await Until([this] { return told_ == o_.agents; }, Deadline());
  }

  int Failed() const {
    int failed = 0;
    for (const auto& a : agents_) failed += !a->error.empty() || a->holding_ns == 0;
    return failed;
  }

  int Report() {
    int64_t first_join = INT64_MAX, last_join = 0, last_holding = 0, last_told = 0;
    int told = 0;
    std::string first_error = fatal_;
    for (const auto& a : agents_) {
      first_join = std::min(first_join, a->joined_ns);
      last_join = std::max(last_join, a->joined_ns);
      last_holding = std::max(last_holding, a->holding_ns);
      last_told = std::max(last_told, a->told_ns);
      told += a->told_ns != 0;
      if (first_error.empty() && !a->error.empty()) first_error = a->error;
    }
    for (char& c : first_error) {
      if (c == '"' || c == '\\' || c == '\n') c = '\'';
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const bool ok = Failed() == 0 && fatal_.empty() && (!o_.fail || told == o_.agents) &&
                    ended_during_hold_ == 0;
    std::printf(
        "{\"agents\":%d,\"total\":%d,\"first_index\":%d,\"failed\":%d,\"first_error\":\"%s\","
        "\"first_join_ns\":%lld,\"last_join_ns\":%lld,\"last_holding_ns\":%lld,"
        "\"fail_ns\":%lld,\"told\":%d,\"last_told_ns\":%lld,\"ended_during_hold\":%d,"
        "\"hold_s\":%.3f,\"hold_store_cpu_s\":%.3f,\"store_cpu_start_s\":%.3f,"
        "\"store_cpu_held_s\":%.3f,\"sim_cpu_s\":%.3f,\"sim_max_rss_kb\":%ld,"
        "\"ok\":%s}\n",
        o_.agents, o_.total, o_.first_index, Failed(), first_error.c_str(),
        static_cast<long long>(first_join), static_cast<long long>(last_join),
        static_cast<long long>(last_holding), static_cast<long long>(fail_ns_), told,
        static_cast<long long>(last_told), ended_during_hold_,
        static_cast<double>(hold_t1_ - hold_t0_) / 1e9, hold_cpu1_ - hold_cpu0_, store_cpu_start_,
        store_cpu_held_,
        static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
        ru.ru_maxrss, ok ? "true" : "false");
    std::fflush(stdout);
    return ok ? 0 : 1;
  }

  Options o_;
  asio::io_context io_;
  asio::steady_timer timer_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::unique_ptr<AsyncStoreClient> control_;
  int finished_ = 0;
  int told_ = 0;
  int ended_during_hold_ = 0;
  int64_t fail_ns_ = 0, hold_t0_ = 0, hold_t1_ = 0;
  double hold_cpu0_ = 0, hold_cpu1_ = 0, store_cpu_start_ = 0, store_cpu_held_ = 0;
  std::string fatal_;
};

}  // namespace
}  // namespace cpplaunch

int main(int argc, char** argv) {
  const cpplaunch::Options o = cpplaunch::Parse(argc, argv);
  const long limit = static_cast<long>(cpplaunch::posix::RaiseFileLimit().after.soft);
  // An etcd agent holds its lease's, its watch's and its requests' connections.
  const long needed = static_cast<long>(o.agents) * (o.channel || o.backend == "etcd" ? 4 : 1) + 64;
  if (needed > limit) {
    std::fprintf(stderr,
                 "rendezvous_sim: %d agents need %ld file descriptors, over the limit %ld; "
                 "use more processes\n",
                 o.agents, needed, limit);
    return 2;
  }
  const int status = cpplaunch::Simulation(o).Run();
  // Thousands of agents' connections and coroutines need no orderly teardown: the store's side
  // is measured already, and the harness stops the store next.
  std::_Exit(status);
}
