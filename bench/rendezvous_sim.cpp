// Rendezvous at scale by simulation: many agents in one process, each running the agent's real
// rendezvous code (DynamicRendezvous, then a JobChannel, as multi_host_session uses them) with
// its own real connections to one real store (cpplaunch-store, started by the harness).
//
//   rendezvous_sim --port P --agents K --total N --run-id ID [--first-index I] [--processes Q]
//                  [--channel 0|1] [--hold-s S] [--fail 0|1|2] [--store-pid PID]
//                  [--timeout-s T] [--keep-alive-ms MS] [--lose L [--spares S --first-spare F]]
//                  [--count-requests 1]
//   rendezvous_sim --backend etcd --endpoints H:P[,H:P...] --agents K --total N --run-id ID
//                  [--first-index I] [--store-pid ETCD_PID] [--timeout-s T]
//                  [--request-timeout-s R] [--etcd-gateway 1]
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
// Hot spares (issue 24), with --channel 1: --lose L names the member agent lost after the round
// runs, and the process that holds it closes that agent's connection, as a SIGKILLed agent's
// closes (its will ends the round: rendezvous.h); every process of the run gets the same --lose.
// --spares S: this process also simulates spares, agents F .. F+S-1 (--first-spare, default N)
// that call Next() once the round runs, as an agent started beyond --nnodes does, and wait in the
// state's spare list. The survivors do what the agent does with the round's end
// (launcher/agent/multi_host_job.cpp: Decide): close the channel, decide with AfterRoundEnd, and
// call Next() with the transition naming the lost seat. Timed: every survivor and the spare that
// took the seat holding the next round; checked: that spare has the lost agent's group rank and
// every survivor kept its own. Put every spare in one process, so that it knows one of its spares
// takes the seat.
// With --backend etcd, every agent runs the etcd backend's real EtcdRendezvous with its own
// EtcdLink (bench/etcd_sim_agent.h) against the etcd cluster at --endpoints; the rendezvous only
// (no --channel), and the store_cpu_* fields are the CPU of --store-pid, the etcd member.
// --etcd-gateway 1: the agents reach etcd through its JSON gateway (HTTP/1.1), the transport
// before gRPC, for a side-by-side measurement.
// --count-requests 1 counts the store requests by kind (bench/request_tally.h): those of the
// replacement with --lose, else those of the first rendezvous (until every agent holds it).
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
#include "bench/request_tally.h"
#include "bench/sim_options.h"
#include "launcher/job/attempt_decision.h"
#include "rendezvous/c10d/dynamic_keys.h"
#include "rendezvous/c10d/dynamic_rendezvous.h"
#include "rendezvous/c10d/job_channel.h"
#include "rendezvous/c10d/store_steps.h"
#include "rendezvous/core/join_steps.h"
#include "rendezvous/core/rendezvous_state.h"
#include "rendezvous/store/client/async_store_client.h"

namespace cpplaunch {
namespace {
namespace asio = boost::asio;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

using Options = SimOptions;

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

// user+system CPU seconds of this process.
double OwnCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
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
  // --lose: whether this is the lost member; the round it held after the loss (a spare: the
  // round it got a place in).
  bool lost = false;
  RendezvousResult next;
  int64_t holding_next_ns = 0;
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
  s.max_restarts = kSimMaxRestarts;
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
  auto settings =
      EtcdSimSettings(o.endpoints, o.total,
                      std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000)), &error);
  if (!settings) SimUsage(error);
  if (o.request_timeout_s > 0) {
    settings->client.request_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(o.request_timeout_s * 1000));
  }
  if (o.etcd_gateway) settings->client.transport = etcd::Transport::kGateway;
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
        a->rendezvous = std::make_unique<DynamicRendezvous>(io_.get_executor(),
                                                            Counted(SettingsFor(o, a->index)));
      }
      agents_.push_back(std::move(a));
    }
    for (int i = 0; i < o.spares; ++i) {
      auto a = std::make_unique<Agent>();
      a->index = o.first_spare + i;
      a->rendezvous = std::make_unique<DynamicRendezvous>(io_.get_executor(),
                                                          Counted(SettingsFor(o, a->index)));
      spares_.push_back(std::move(a));
    }
  }

  int Run() {
    asio::co_spawn(io_, Main(), [this](const std::exception_ptr& e) {
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

  // --count-requests: the settings' trace counts the store requests answered while counting_
  // (request_tally.h): where the replacement's time goes.
  template <class Settings>
  Settings Counted(Settings settings) {
    if (o_.count_requests) {
      settings.trace = [this](const std::string& line) {
        if (counting_) tally_.Count(line, NowNs());
      };
    }
    return settings;
  }

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
        io_.get_executor(), Counted(ChannelSettings(o_, a.index)), a.round,
        [this, &a](const RoundEnd& end) {
          if (a.lost) return;  // its own connection's end: a killed agent hears nothing
          a.told_ns = NowNs();
          ++told_;
          if (o_.lose >= 0) asio::co_spawn(io_, Rejoin(a, end), asio::detached);
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

  // A survivor, told of the loss: what the agent does (MultiHostJob::Decide), without workers
  // to stop first.
  Task Rejoin(Agent& a, RoundEnd end) {
    try {
      a.channel->Stop();
      AttemptResult stopped;
      stopped.outcome = AttemptOutcome::kStopped;
      stopped.restart_count = a.round.restart_count;
      const AttemptDecision decision =
          AfterRoundEnd(stopped, end, a.round.restart_count, kSimMaxRestarts);
      if (decision.next != NextStep::kNextAttempt) throw std::runtime_error(decision.message);
      const RoundTransition previous{a.round.round, a.round.restart_count,
                                     decision.consumes_restart, LostSeat(end), FailedSeat(end)};
      a.next = co_await a.rendezvous->Next(previous);
      a.holding_next_ns = NowNs();
    } catch (const std::exception& e) {
      a.error = std::string("after the loss: ") + e.what();
    }
    ++rejoined_;
  }

  // A host started when the round is full: its Next() returns only when it gets a seat.
  Task Spare(Agent& a) {
    a.joined_ns = NowNs();
    try {
      a.next = co_await a.rendezvous->Next(std::nullopt);
      a.holding_next_ns = NowNs();
    } catch (const std::exception& e) {
      a.error = std::string("spare: ") + e.what();
    }
    ++rejoined_;
  }

  // Until the state lists every spare of this process: they wait for a place.
  Task AwaitSparesListed() {
    const std::string key = DynamicKeys(o_.run_id).State();
    const int64_t deadline = Deadline();
    while (NowNs() < deadline) {
      std::optional<Bytes> raw = co_await ReadIfPresent(*control_, key);
      std::string error;
      std::optional<RendezvousState> state;
      if (raw) state = RendezvousState::Decode(*raw, &error);
      if (state && std::all_of(spares_.begin(), spares_.end(), [&](const auto& spare) {
            return std::binary_search(state->spares.begin(), state->spares.end(),
                                      "sim" + std::to_string(spare->index));
          })) {
        co_return;
      }
      co_await Sleep(std::chrono::milliseconds(5));
    }
    throw std::runtime_error("the spares were not listed in the state in time");
  }

  Agent* Member(int index) const {
    for (const auto& a : agents_) {
      if (a->index == index) return a.get();
    }
    return nullptr;
  }

  // --lose: the spares wait, the lost member's connection closes, and the survivors and one
  // spare hold the next round.
  Task ReplaceLost() {
    const std::string lost_key = "sim/" + o_.run_id + "/lost_rank";
    Agent* lost = Member(o_.lose);
    if (lost) {
      lost->lost = true;
      co_await control_->Set(lost_key, std::to_string(lost->round.group_rank));
    }
    for (auto& s : spares_) asio::co_spawn(io_, Spare(*s), asio::detached);
    if (!spares_.empty()) co_await AwaitSparesListed();
    co_await Barrier("spares");
    counting_ = true;
    count_t0_ = NowNs();
    if (lost) {
      co_await Sleep(std::chrono::milliseconds(100));  // as --fail: every WAIT is in place
      store_cpu_loss_ = CpuSeconds(o_.store_pid);
      kill_ns_ = count_t0_ = NowNs();
      lost->rendezvous->Cancel();  // the connection closes, as a SIGKILLed agent's does
    }
    sim_cpu_loss_ = OwnCpuSeconds();
    const int expected = o_.agents - (lost ? 1 : 0) + (spares_.empty() ? 0 : 1);
    co_await Until([&] { return rejoined_ >= expected; }, Deadline());
    counting_ = false;
    store_cpu_replaced_ = CpuSeconds(o_.store_pid);
    sim_cpu_replaced_ = OwnCpuSeconds();
    if (!spares_.empty()) lost_rank_ = std::atoi((co_await control_->Get(lost_key)).c_str());
  }

  Task Main() {
    store_cpu_start_ = CpuSeconds(o_.store_pid);
    // --count-requests without --lose counts the first rendezvous.
    counting_ = o_.count_requests && o_.lose < 0;
    count_t0_ = NowNs();
    for (auto& a : agents_) asio::co_spawn(io_, Join(*a), asio::detached);
    co_await Until([this] { return finished_ == o_.agents; }, Deadline() + 10'000'000'000);
    store_cpu_held_ = CpuSeconds(o_.store_pid);
    counting_ = false;
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
    if (o_.lose >= 0) {
      co_await ReplaceLost();
      co_return;
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

  // --lose: what the round after the loss gave this process's agents, and whether it is right:
  // every survivor holds it at its own group rank; with spares here, exactly one of them holds
  // it, at the lost member's group rank (written by the process that lost it).
  struct Replacement {
    int held = 0, moved = 0, placed = 0, spare_rank = -1;
    int64_t first_told_ns = INT64_MAX, last_holding_ns = 0;
    int64_t next_round = -1;
    int next_restart_count = -1;
    bool ok = false;
  };

  Replacement Replaced() const {
    Replacement r;
    bool whole = true;  // every round after the loss has all N members
    for (const auto& a : agents_) {
      if (a->lost) continue;
      if (a->told_ns) r.first_told_ns = std::min(r.first_told_ns, a->told_ns);
      if (!a->holding_next_ns) continue;
      ++r.held;
      r.moved += a->next.group_rank != a->round.group_rank;
      r.last_holding_ns = std::max(r.last_holding_ns, a->holding_next_ns);
      r.next_round = a->next.round;
      r.next_restart_count = a->next.restart_count;
      whole = whole && a->next.group_size == o_.total;
    }
    for (const auto& s : spares_) {
      if (!s->holding_next_ns) continue;
      ++r.placed;
      r.spare_rank = s->next.group_rank;
      r.last_holding_ns = std::max(r.last_holding_ns, s->holding_next_ns);
      whole = whole && s->next.group_size == o_.total;
    }
    const int survivors = o_.agents - (Member(o_.lose) ? 1 : 0);
    r.ok = r.held == survivors && r.moved == 0 && whole &&
           (spares_.empty() || (r.placed == 1 && r.spare_rank == lost_rank_));
    if (r.first_told_ns == INT64_MAX) r.first_told_ns = 0;
    return r;
  }

  std::string ReplacementJson(const Replacement& r) const {
    char text[512];
    std::snprintf(
        text, sizeof text,
        ",\"lose\":%d,\"spares\":%d,\"kill_ns\":%lld,\"first_told_ns\":%lld,"
        "\"last_holding_next_ns\":%lld,\"held_next\":%d,\"moved\":%d,"
        "\"spares_placed\":%d,\"spare_rank\":%d,\"lost_rank\":%d,\"next_round\":%lld,"
        "\"next_restart_count\":%d,\"store_cpu_loss_s\":%.3f,"
        "\"store_cpu_replaced_s\":%.3f,\"sim_cpu_replacement_s\":%.3f,\"replacement_ok\":%s",
        o_.lose, o_.spares, static_cast<long long>(kill_ns_),
        static_cast<long long>(r.first_told_ns), static_cast<long long>(r.last_holding_ns), r.held,
        r.moved, r.placed, r.spare_rank, lost_rank_, static_cast<long long>(r.next_round),
        r.next_restart_count, store_cpu_loss_, store_cpu_replaced_,
        sim_cpu_replaced_ - sim_cpu_loss_, r.ok ? "true" : "false");
    return o_.count_requests ? text + tally_.Json(count_t0_) : text;
  }

  int Report() {
    int64_t first_join = INT64_MAX, last_join = 0, last_holding = 0, last_told = 0;
    int told = 0;
    std::string first_error = fatal_;
    for (const auto& s : spares_) {
      if (first_error.empty() && !s->error.empty()) first_error = s->error;
    }
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
    getrusage(RUSAGE_SELF, &ru);  // for the peak RSS
    const Replacement replaced = Replaced();
    const std::string replacement = o_.lose >= 0        ? ReplacementJson(replaced)
                                    : o_.count_requests ? tally_.Json(count_t0_)
                                                        : "";
    const bool ok = Failed() == 0 && fatal_.empty() && (!o_.fail || told == o_.agents) &&
                    ended_during_hold_ == 0 && (o_.lose < 0 || replaced.ok);
    std::printf(
        "{\"agents\":%d,\"total\":%d,\"first_index\":%d,\"failed\":%d,\"first_error\":\"%s\","
        "\"first_join_ns\":%lld,\"last_join_ns\":%lld,\"last_holding_ns\":%lld,"
        "\"fail_ns\":%lld,\"told\":%d,\"last_told_ns\":%lld,\"ended_during_hold\":%d,"
        "\"hold_s\":%.3f,\"hold_store_cpu_s\":%.3f,\"store_cpu_start_s\":%.3f,"
        "\"store_cpu_held_s\":%.3f,\"sim_cpu_s\":%.3f,\"sim_max_rss_kb\":%ld%s,"
        "\"ok\":%s}\n",
        o_.agents, o_.total, o_.first_index, Failed(), first_error.c_str(),
        static_cast<long long>(first_join), static_cast<long long>(last_join),
        static_cast<long long>(last_holding), static_cast<long long>(fail_ns_), told,
        static_cast<long long>(last_told), ended_during_hold_,
        static_cast<double>(hold_t1_ - hold_t0_) / 1e9, hold_cpu1_ - hold_cpu0_, store_cpu_start_,
        store_cpu_held_, OwnCpuSeconds(), ru.ru_maxrss, replacement.c_str(), ok ? "true" : "false");
    std::fflush(stdout);
    return ok ? 0 : 1;
  }

  Options o_;
  asio::io_context io_;
  asio::steady_timer timer_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::unique_ptr<AsyncStoreClient> control_;
  std::vector<std::unique_ptr<Agent>> spares_;
  int finished_ = 0;
  int told_ = 0;
  int rejoined_ = 0;
  bool counting_ = false;
  RequestTally tally_{o_.run_id};
  // When counting started: the loss in the process that lost the agent, else the barrier.
  int64_t count_t0_ = 0;
  int lost_rank_ = -1;
  int64_t kill_ns_ = 0;
  double store_cpu_loss_ = 0, store_cpu_replaced_ = 0, sim_cpu_loss_ = 0, sim_cpu_replaced_ = 0;
  int ended_during_hold_ = 0;
  int64_t fail_ns_ = 0, hold_t0_ = 0, hold_t1_ = 0;
  double hold_cpu0_ = 0, hold_cpu1_ = 0, store_cpu_start_ = 0, store_cpu_held_ = 0;
  std::string fatal_;
};

}  // namespace
}  // namespace cpplaunch

int main(int argc, char** argv) {
  const cpplaunch::Options o = cpplaunch::ParseSimOptions(argc, argv);
  const long limit = static_cast<long>(cpplaunch::posix::RaiseFileLimit().after.soft);
  // An etcd agent holds one gRPC connection, or its watch's and its requests' connections through
  // the gateway (and one more while a renewal runs).
  const int per_agent = o.backend == "etcd" ? (o.etcd_gateway ? 4 : 1) : o.channel ? 4 : 1;
  const long needed = static_cast<long>(o.agents + o.spares) * per_agent + 64;
  if (needed > limit) {
    std::fprintf(stderr,
                 "rendezvous_sim: %d agents need %ld file descriptors, over the limit %ld; "
                 "use more processes\n",
                 o.agents + o.spares, needed, limit);
    return 2;
  }
  const int status = cpplaunch::Simulation(o).Run();
  // Thousands of agents' connections and coroutines need no orderly teardown: the store's side
  // is measured already, and the harness stops the store next.
  std::_Exit(status);
}
