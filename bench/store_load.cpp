// The store load generator: one binary drives cpplaunch's store and LibTorch 1.13's TCPStore server
// with byte-identical traffic in the legacy (1.13) dialect, encoded by
// rendezvous/store/wire/reply_codec.
//
//   store_load throughput --port P --clients K [--seconds S] [--warmup-ms W] [--threads T]
//       K connections, each a closed loop of PyTorch client calls on its own keys:
//         set(k, 32 B)  -> SET k v + WAIT [k]   (WAIT = the first half of a client get())
//         get(k)        -> GET k
//         add(counter)  -> ADD "/bench/counter" 1  (one counter shared by all, like init/)
//       = 4 requests in 3 round trips per iteration, one outstanding round trip per connection.
//       Counts requests answered inside an S-second window after W ms of warm-up; latency is
//       per round trip (send to complete reply).
//   store_load storm --port P --clients W [--timeout-s T] [--callback-sockets 1|0]
//       W clients started at once, each doing PyTorch 1.13's init pattern:
//         connect; ADD "init/" 1; connect the idle callback socket (the TCPStore constructor
//         does both); SET own key;
//         ADD "/storm/arrived" 1, and the client that brings it to W does SET "/storm/go";
//         WAIT ["/storm/go"]; GET the next rank's key.
//       Time from the first connect() to the last GET reply (all released).
//   store_load check --port P
//       One blocking StoreClient (legacy dialect) does set/get/add/wait/check; exit 0 when every
//       answer is right. The harness runs it before measuring a server.
//
// Every connection lives in a few epoll threads (T, default 1), so thousands of clients cost
// file descriptors, not threads. The soft RLIMIT_NOFILE is raised to the hard limit at start.
// Output: one JSON object on stdout. Exit status 1 when any connection failed or timed out.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "launcher/process/posix_sys.h"
#include "rendezvous/store/client/store_client.h"
#include "rendezvous/store/wire/reply_codec.h"

namespace cpplaunch {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct Options {
  std::string mode;
  std::string host = "127.0.0.1";
  int port = 0;
  int clients = 1;
  double seconds = 3.0;
  int warmup_ms = 500;
  int threads = 1;
  double timeout_s = 120.0;
  bool callback_sockets = true;
};

bool g_spread_sources = true;  // --spread-sources; set once in main before any thread starts

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "store_load: %s: %s\n", what, std::strerror(errno));
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_load throughput|storm|check --port P [--clients N] ...\n");
    std::exit(2);
  }
  o.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--host")
      o.host = v;
    else if (a == "--port")
      o.port = std::atoi(v);
    else if (a == "--clients")
      o.clients = std::atoi(v);
    else if (a == "--seconds")
      o.seconds = std::atof(v);
    else if (a == "--warmup-ms")
      o.warmup_ms = std::atoi(v);
    else if (a == "--threads")
      o.threads = std::max(1, std::atoi(v));
    else if (a == "--timeout-s")
      o.timeout_s = std::atof(v);
    else if (a == "--callback-sockets")
      o.callback_sockets = std::atoi(v) != 0;
    else if (a == "--spread-sources")
      g_spread_sources = std::atoi(v) != 0;
    else {
      std::fprintf(stderr, "store_load: unknown option %s\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.port <= 0 || o.port > 65535 || o.clients <= 0) {
    std::fprintf(stderr, "store_load: --port and --clients are required and positive\n");
    std::exit(2);
  }
  return o;
}

// ---- Requests, encoded once in the legacy dialect by the project's encoder.

std::string Encode(Command command, std::vector<std::string> keys, std::vector<Bytes> values = {},
                   int64_t number = 0) {
  Request r;
  r.command = command;
  r.keys = std::move(keys);
  r.values = std::move(values);
  r.number = number;
  std::string out;
  if (!EncodeRequest(Dialect::kLegacy, r, &out)) {
    std::fprintf(stderr, "store_load: cannot encode %s\n", CommandName(command));
    std::exit(2);
  }
  return out;
}

// ---- One connection: a socket, its pending output and its reply decoder.

struct Conn {
  int fd = -1;
  int id = 0;
  int step = 0;            // position in the mode's script
  std::uint64_t iter = 0;  // throughput: iteration count
  std::int64_t sent_ns = 0;
  std::string out;
  std::size_t out_off = 0;
  ReplyDecoder decoder;
  bool connected = false;
  std::uint32_t registered = 0;  // the epoll events currently asked for
  bool done = false;
  bool failed = false;
  // PyTorch 1.13's second, idle "callback" connection: requested by a script through
  // open_callback, owned here, and never sent a byte.
  bool open_callback = false;
  std::unique_ptr<Conn> callback;
  Conn* parent = nullptr;
};

int OpenSocket() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) Die("socket");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Close with RST (linger 0) so that thousands of closes leave no TIME_WAIT ports behind.
void CloseHard(int fd) {
  if (fd < 0) return;
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

// Gives connection number n its own loopback source address, 127.1.0.0 + n (port chosen at
// connect time). With one source address, Linux picks each ephemeral port by scanning the ports
// already connected to the same destination, which makes the client side of 16,384 connections
// quadratic (it dominated the storm before this); distinct addresses are also what ranks on
// different hosts look like to the server. Only for a loopback server.
void BindSource(int fd, std::uint32_t n) {
  if (!g_spread_sources) return;
  int one = 1;
  setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | (n & 0xffffu));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) Die("bind source address");
}

sockaddr_in Address(const Options& o) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(o.port));
  if (inet_pton(AF_INET, o.host.c_str(), &a.sin_addr) != 1) {
    std::fprintf(stderr, "store_load: --host must be an IPv4 address\n");
    std::exit(2);
  }
  if (g_spread_sources && (ntohl(a.sin_addr.s_addr) >> 24) != 127) {
    std::fprintf(stderr,
                 "store_load: --spread-sources needs a loopback --host (or --spread-sources 0)\n");
    std::exit(2);
  }
  return a;
}

// A mode's script: what to send when a connection is ready and what to do with each reply.
class Script {
 public:
  virtual ~Script() = default;
  virtual void Start(Conn& c) = 0;              // connected: queue the first request
  virtual void OnReply(Conn& c, Reply& r) = 0;  // queue the next request, or mark done
  virtual void OnCallbackConnected(Conn&) {}    // c's callback connection is established
};

void Queue(Conn& c, const std::string& bytes, ReplyShape shape) {
  c.out.append(bytes);
  c.decoder.Expect(shape);
}

// ---- The epoll engine shared by both modes: one instance per thread.

class Engine {
 public:
  Engine(Script& script, std::vector<Conn*> conns) : script_(script), conns_(std::move(conns)) {
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) Die("epoll_create1");
  }
  ~Engine() { close(ep_); }

  // Non-blocking connect of every connection; Start() runs when each one is writable.
  void ConnectAll(const sockaddr_in& addr) {
    addr_ = addr;
    for (Conn* c : conns_) {
      if (!StartConnect(*c)) Fail(*c, "connect");
    }
  }

  // Runs until every connection is done or failed, or until `stop` becomes true or `deadline_ns`.
  void Run(const std::atomic<bool>& stop, std::int64_t deadline_ns) {
    std::vector<epoll_event> events(1024);
    std::vector<char> buf(64 * 1024);
    while (!stop.load(std::memory_order_relaxed) && live_ > 0 && NowNs() < deadline_ns) {
      const int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), 20);
      if (n < 0) {
        if (errno == EINTR) continue;
        Die("epoll_wait");
      }
      for (int i = 0; i < n; ++i)
        Handle(*static_cast<Conn*>(events[static_cast<std::size_t>(i)].data.ptr),
               events[static_cast<std::size_t>(i)].events, buf);
    }
  }

  int live() const { return live_; }
  const std::string& first_failure() const { return first_failure_; }

 private:
  bool StartConnect(Conn& c) {
    c.fd = OpenSocket();
    BindSource(c.fd, ++sources_used_);
    if (connect(c.fd, reinterpret_cast<const sockaddr*>(&addr_), sizeof addr_) != 0 &&
        errno != EINPROGRESS) {
      return false;
    }
    epoll_event ev{};
    ev.events = EPOLLOUT;
    ev.data.ptr = &c;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev) != 0) Die("epoll_ctl");
    c.registered = EPOLLOUT;
    return true;
  }

  void Handle(Conn& c, std::uint32_t events, std::vector<char>& buf) {
    if (c.done || c.failed) return;
    if (!c.connected) {
      if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        errno = err;
        if (c.parent == nullptr) return Fail(c, "connect");
        c.failed = true;
        epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        return Fail(*c.parent, "callback connect");
      }
      c.connected = true;
      if (c.parent != nullptr) {  // an idle callback connection: leave it alone from now on
        epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        script_.OnCallbackConnected(*c.parent);
        return Flush(*c.parent);
      }
      script_.Start(c);
      return Flush(c);
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ReadReplies(c, buf);
    if (!c.done && !c.failed && (events & EPOLLOUT)) Flush(c);
  }

  void ReadReplies(Conn& c, std::vector<char>& buf) {
    const ssize_t got = read(c.fd, buf.data(), buf.size());
    if (got == 0) return Fail(c, "closed by server");
    if (got < 0 && errno != EAGAIN && errno != EINTR) return Fail(c, "read");
    if (got < 0) return;
    std::string_view in(buf.data(), static_cast<std::size_t>(got));
    while (!in.empty() && !c.done && !c.failed) {
      const DecodeResult r = c.decoder.Feed(in);
      in.remove_prefix(r.consumed);
      if (r.status == DecodeStatus::kMalformed) return Fail(c, "malformed reply");
      if (r.status == DecodeStatus::kNeedMore) break;
      const std::size_t before = c.out.size();
      script_.OnReply(c, c.decoder.reply());
      if (c.done) {
        --live_;
        return;
      }
      if (c.open_callback) {
        c.open_callback = false;
        c.callback = std::make_unique<Conn>();
        c.callback->parent = &c;
        if (!StartConnect(*c.callback)) return Fail(c, "callback connect");
      }
      if (c.out.size() != before) Flush(c);
    }
  }

  void Flush(Conn& c) {
    while (c.out_off < c.out.size()) {
      const ssize_t w = write(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return Fail(c, "write");
        break;
      }
      c.out_off += static_cast<std::size_t>(w);
    }
    const bool pending = c.out_off < c.out.size();
    if (!pending) {
      c.out.clear();
      c.out_off = 0;
    }
    // Re-register only when the interest changes: no epoll_ctl per round trip in the steady state.
    const std::uint32_t wanted = EPOLLIN | (pending ? EPOLLOUT : 0u);
    if (wanted == c.registered) return;
    epoll_event ev{};
    ev.events = wanted;
    ev.data.ptr = &c;
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
    c.registered = wanted;
  }

  void Fail(Conn& c, const char* why) {
    if (c.failed || c.done) return;
    if (first_failure_.empty()) {
      first_failure_ = std::string(why) + " (client " + std::to_string(c.id) + ", step " +
                       std::to_string(c.step) + ", errno " + std::strerror(errno) + ")";
    }
    c.failed = true;
    --live_;
    if (c.fd >= 0) epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
  }

  Script& script_;
  std::vector<Conn*> conns_;
  std::string first_failure_;
  std::uint32_t sources_used_ = 0;
  sockaddr_in addr_{};
  int ep_ = -1;
  int live_ = static_cast<int>(conns_.size());
};

// ---- throughput

class MixScript : public Script {
 public:
  static constexpr int kKeysPerClient = 8;

  explicit MixScript(int clients)
      : set_wait_(static_cast<std::size_t>(clients)), get_(set_wait_.size()) {
    const Bytes value(32, 'v');
    for (int c = 0; c < clients; ++c) {
      for (int k = 0; k < kKeysPerClient; ++k) {
        const std::string key = "/bench/c" + std::to_string(c) + "/k" + std::to_string(k);
        set_wait_[static_cast<std::size_t>(c)].push_back(Encode(Command::kSet, {key}, {value}) +
                                                         Encode(Command::kWait, {key}));
        get_[static_cast<std::size_t>(c)].push_back(Encode(Command::kGet, {key}));
      }
    }
    add_ = Encode(Command::kAdd, {"/bench/counter"}, {}, 1);
  }

  void Start(Conn& c) override { Next(c); }

  void OnReply(Conn& c, Reply&) override {
    const std::int64_t now = NowNs();
    const int ops = c.step == 1 ? 2 : 1;  // the first round trip carries SET and WAIT
    all_ops_ += static_cast<std::uint64_t>(ops);
    if (now >= window_start_ && now < window_end_) {
      ops_ += static_cast<std::uint64_t>(ops);
      latencies_.push_back(now - c.sent_ns);
    }
    if (now >= window_end_) {
      c.done = true;
      return;
    }
    Next(c);
  }

  void SetWindow(std::int64_t start, std::int64_t end) {
    window_start_ = start;
    window_end_ = end;
  }
  std::uint64_t ops() const { return ops_; }
  std::uint64_t all_ops() const { return all_ops_; }  // warm-up and tail included
  std::vector<std::int64_t>& latencies() { return latencies_; }

 private:
  void Next(Conn& c) {
    const auto id = static_cast<std::size_t>(c.id);
    const auto k = static_cast<std::size_t>(c.iter % kKeysPerClient);
    c.step = c.step % 3 + 1;
    if (c.step == 1)
      Queue(c, set_wait_[id][k], ReplyShape::kU8);
    else if (c.step == 2)
      Queue(c, get_[id][k], ReplyShape::kBytes);
    else {
      Queue(c, add_, ReplyShape::kI64);
      ++c.iter;
    }
    c.sent_ns = NowNs();
  }

  std::vector<std::vector<std::string>> set_wait_;
  std::vector<std::vector<std::string>> get_;
  std::string add_;
  std::int64_t window_start_ = INT64_MAX;
  std::int64_t window_end_ = INT64_MAX;
  std::uint64_t ops_ = 0;
  std::uint64_t all_ops_ = 0;
  std::vector<std::int64_t> latencies_;
};

double Percentile(std::vector<std::int64_t>& v, double p) {
  if (v.empty()) return 0;
  const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
  return static_cast<double>(v[idx]) / 1000.0;
}

// Splits conns round-robin over `threads` engines.
std::vector<std::vector<Conn*>> Partition(std::vector<std::unique_ptr<Conn>>& conns, int threads) {
  std::vector<std::vector<Conn*>> parts(static_cast<std::size_t>(threads));
  for (std::size_t i = 0; i < conns.size(); ++i) parts[i % parts.size()].push_back(conns[i].get());
  return parts;
}

std::vector<std::unique_ptr<Conn>> MakeConns(int n) {
  std::vector<std::unique_ptr<Conn>> conns;
  for (int i = 0; i < n; ++i) {
    conns.push_back(std::make_unique<Conn>());
    conns.back()->id = i;
  }
  return conns;
}

int CountFailed(const std::vector<std::unique_ptr<Conn>>& conns) {
  int failed = 0;
  for (const auto& c : conns) failed += c->failed || !c->done;
  return failed;
}

// User + system CPU time of this process so far.
double OwnCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

std::string FirstFailure(const std::vector<std::unique_ptr<Engine>>& engines) {
  for (const auto& e : engines) {
    if (!e->first_failure().empty()) return e->first_failure();
  }
  return "";
}

int RunThroughput(const Options& o, long fd_limit) {
  auto conns = MakeConns(o.clients);
  const auto parts = Partition(conns, std::min(o.threads, o.clients));
  std::vector<std::unique_ptr<MixScript>> scripts;
  std::vector<std::unique_ptr<Engine>> engines;
  const sockaddr_in addr = Address(o);
  for (const auto& part : parts) {
    scripts.push_back(std::make_unique<MixScript>(o.clients));
    engines.push_back(std::make_unique<Engine>(*scripts.back(), part));
  }
  const std::int64_t start = NowNs() + static_cast<std::int64_t>(o.warmup_ms) * 1'000'000;
  const std::int64_t end = start + static_cast<std::int64_t>(o.seconds * 1e9);
  for (auto& s : scripts) s->SetWindow(start, end);
  for (auto& e : engines) e->ConnectAll(addr);
  std::atomic<bool> stop{false};
  const std::int64_t deadline = end + static_cast<std::int64_t>(o.timeout_s * 1e9);
  std::vector<std::thread> threads;
  for (auto& e : engines) threads.emplace_back([&e, &stop, deadline] { e->Run(stop, deadline); });
  for (auto& t : threads) t.join();

  std::uint64_t ops = 0;
  std::uint64_t all_ops = 0;
  std::vector<std::int64_t> lat;
  for (auto& s : scripts) {
    ops += s->ops();
    all_ops += s->all_ops();
    lat.insert(lat.end(), s->latencies().begin(), s->latencies().end());
  }
  const int failed = CountFailed(conns);
  for (auto& c : conns) CloseHard(c->fd);
  const std::size_t round_trips = lat.size();
  const double own_cpu_us = OwnCpuSeconds() * 1e6;
  std::printf(
      "{\"mode\":\"throughput\",\"clients\":%d,\"threads\":%zu,\"seconds\":%.3f,\"ops\":%llu,"
      "\"all_ops\":%llu,\"round_trips\":%zu,\"ops_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
      "\"max_us\":%.1f,"
      "\"driver_cpu_us_per_op\":%.2f,\"failed_connections\":%d,\"first_failure\":\"%s\",\"fd_"
      "limit\":%ld}\n",
      o.clients, engines.size(), o.seconds, static_cast<unsigned long long>(ops),
      static_cast<unsigned long long>(all_ops), round_trips, static_cast<double>(ops) / o.seconds,
      Percentile(lat, 0.50), Percentile(lat, 0.99), Percentile(lat, 1.0),
      all_ops ? own_cpu_us / static_cast<double>(all_ops) : 0.0, failed,
      FirstFailure(engines).c_str(), fd_limit);
  return failed == 0 ? 0 : 1;
}

// ---- storm

class StormScript : public Script {
 public:
  StormScript(int clients, bool callback_sockets)
      : clients_(clients), callback_sockets_(callback_sockets) {
    const Bytes value(32, 'a');
    add_init_ = Encode(Command::kAdd, {"init/"}, {}, 1);
    arrive_.reserve(static_cast<std::size_t>(clients));
    get_next_.reserve(static_cast<std::size_t>(clients));
    for (int i = 0; i < clients; ++i) {
      arrive_.push_back(Encode(Command::kSet, {RankKey(i)}, {value}) +
                        Encode(Command::kAdd, {"/storm/arrived"}, {}, 1));
      get_next_.push_back(Encode(Command::kGet, {RankKey((i + 1) % clients)}));
    }
    wait_go_ = Encode(Command::kWait, {"/storm/go"});
    set_go_ = Encode(Command::kSet, {"/storm/go"}, {"1"});
  }

  void Start(Conn& c) override {
    stamp(connected_);
    c.step = 1;
    Queue(c, add_init_, ReplyShape::kI64);
  }

  void OnReply(Conn& c, Reply& r) override {
    const auto id = static_cast<std::size_t>(c.id);
    switch (c.step++) {
      case 1:
        stamp(initialized_);
        if (callback_sockets_)
          c.open_callback = true;
        else
          OnCallbackConnected(c);
        break;
      case 2:
        stamp(joined_);
        if (r.number == clients_)
          Queue(c, set_go_ + wait_go_, ReplyShape::kU8);
        else
          Queue(c, wait_go_, ReplyShape::kU8);
        break;
      case 3:
        stamp(released_);
        Queue(c, get_next_[id], ReplyShape::kBytes);
        break;
      default:
        if (r.values.size() != 1 || r.values[0].size() != 32) {
          ++bad_values_;
        }
        stamp(finished_);
        c.done = true;
    }
  }

  // The 1.13 constructor connects its callback socket after ADD init/ and before returning.
  void OnCallbackConnected(Conn& c) override {
    stamp(callback_connected_);
    Queue(c, arrive_[static_cast<std::size_t>(c.id)], ReplyShape::kI64);
  }

  std::int64_t initialized_ = 0, callback_connected_ = 0;
  std::int64_t connected_ = 0, joined_ = 0, released_ = 0, finished_ = 0;
  int bad_values_ = 0;

 private:
  static std::string RankKey(int i) { return "/storm/rank/" + std::to_string(i); }
  static void stamp(std::int64_t& last) { last = NowNs(); }

  int clients_;
  bool callback_sockets_;
  std::string add_init_, wait_go_, set_go_;
  std::vector<std::string> arrive_, get_next_;
};

int RunStorm(const Options& o, long fd_limit) {
  auto conns = MakeConns(o.clients);
  StormScript script(o.clients, o.callback_sockets);
  // One thread: the storm's ordering (a single "go" setter) needs no locking this way, and the
  // server, not the driver, is what the storm loads.
  Engine engine(script, Partition(conns, 1)[0]);
  const std::int64_t t0 = NowNs();
  engine.ConnectAll(Address(o));
  const std::int64_t connect_calls_done = NowNs();
  std::atomic<bool> stop{false};
  engine.Run(stop, t0 + static_cast<std::int64_t>(o.timeout_s * 1e9));
  const std::int64_t t_end = NowNs();
  const int failed = CountFailed(conns);
  for (auto& c : conns) {
    CloseHard(c->fd);
    if (c->callback) CloseHard(c->callback->fd);
  }
  auto ms = [t0](std::int64_t t) { return t == 0 ? -1.0 : static_cast<double>(t - t0) / 1e6; };
  std::printf(
      "{\"mode\":\"storm\",\"clients\":%d,\"total_ms\":%.3f,\"connect_calls_ms\":%.3f,"
      "\"last_connected_ms\":%.3f,\"last_init_ms\":%.3f,\"last_callback_ms\":%.3f,\"last_joined_"
      "ms\":%.3f,\"last_released_ms\":%.3f,"
      "\"failed_connections\":%d,\"bad_values\":%d,\"timed_out\":%s,\"callback_sockets\":%s,"
      "\"first_failure\":\"%s\",\"fd_limit\":%ld}\n",
      o.clients, failed == 0 ? ms(script.finished_) : ms(t_end), ms(connect_calls_done),
      ms(script.connected_), ms(script.initialized_), ms(script.callback_connected_),
      ms(script.joined_), ms(script.released_), failed, script.bad_values_,
      engine.live() > 0 ? "true" : "false", o.callback_sockets ? "true" : "false",
      engine.first_failure().c_str(), fd_limit);
  return failed == 0 && script.bad_values_ == 0 ? 0 : 1;
}

// ---- check: the same dialect through the project's blocking client, answers verified.

int RunCheck(const Options& o) {
  StoreClientOptions options;
  options.host = o.host;
  options.port = static_cast<std::uint16_t>(o.port);
  options.dialect = Dialect::kLegacy;
  options.connect_timeout = std::chrono::seconds(10);
  options.timeout = std::chrono::seconds(10);
  std::string problem;
  try {
    StoreClient store(options);
    const std::string key = "check/" + std::to_string(getpid());
    store.Set(key, "value");
    if (store.Get(key) != "value") problem = "get returned a different value";
    const int64_t base = store.Add(key + "/n", 0);
    if (store.Add(key + "/n", 5) != base + 5) problem = "add is not atomic arithmetic";
    store.Wait({key}, std::chrono::seconds(5));
    if (!store.Check({key}) || store.Check({key + "/missing"})) problem = "check is wrong";
  } catch (const StoreError& e) {
    problem = e.what();
  }
  for (char& ch : problem) {
    if (ch == '"' || ch == '\\') ch = '\'';
  }
  std::printf("{\"mode\":\"check\",\"ok\":%s,\"problem\":\"%s\"}\n",
              problem.empty() ? "true" : "false", problem.c_str());
  return problem.empty() ? 0 : 1;
}

}  // namespace
}  // namespace cpplaunch

int main(int argc, char** argv) {
  const cpplaunch::Options o = cpplaunch::Parse(argc, argv);
  const long fd_limit = static_cast<long>(cpplaunch::posix::RaiseFileLimit().after.soft);
  const long per_client = o.mode == "storm" && !o.callback_sockets ? 1 : 2;
  if (per_client * o.clients + 64 > fd_limit) {
    std::fprintf(stderr, "store_load: %d clients need more than the file limit %ld\n", o.clients,
                 fd_limit);
    return 2;
  }
  if (o.mode == "throughput") return cpplaunch::RunThroughput(o, fd_limit);
  if (o.mode == "storm") return cpplaunch::RunStorm(o, fd_limit);
  if (o.mode == "check") return cpplaunch::RunCheck(o);
  std::fprintf(stderr, "store_load: unknown mode %s\n", o.mode.c_str());
  return 2;
}
