// LibTorch 1.13's C++ client (c10d::TCPStore) against our StoreServer and against LibTorch's own
// server: the same scenario on both, results compared line by line. Covers what Python 1.13 does
// not expose: check() and watchKey().
//
// Exit status: 0 identical results, 1 a difference or a failure.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "rendezvous/store/store_server.h"

namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<uint8_t>;

Bytes B(const std::string& text) { return Bytes(text.begin(), text.end()); }
std::string S(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

std::string Optional(const c10::optional<std::string>& value) {
  return value ? "'" + *value + "'" : "none";
}

// Records watchKey callbacks (they run on the client's callback thread).
class WatchLog {
 public:
  c10d::WatchKeyCallback Callback(const std::string& key) {
    return [this, key](c10::optional<std::string> old_value, c10::optional<std::string> new_value) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back("watch " + key + ": " + Optional(old_value) + " -> " + Optional(new_value));
      changed_.notify_all();
    };
  }
  std::vector<std::string> WaitFor(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, 5s, [&] { return events_.size() >= count; });
    std::this_thread::sleep_for(100ms);  // and nothing more arrives
    return events_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> events_;
};

template <typename F>
std::string Attempt(F f) {
  try {
    return f();
  } catch (const std::exception&) {
    return "raised";
  }
}

std::vector<std::string> Scenario(uint16_t port) {
  c10d::TCPStoreOptions options;
  options.port = port;
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = 10s;
  c10d::TCPStore store("127.0.0.1", options);
  std::vector<std::string> out;
  auto record = [&](const std::string& label, const std::string& value) {
    out.push_back(label + " = " + value);
  };
  WatchLog log;
  store.watchKey("wk", log.Callback("wk"));
  store.watchKey("wc", log.Callback("wc"));
  store.set("k", B("v"));
  record("get", S(store.get("k")));
  record("add", std::to_string(store.add("n", 5)));
  record("add", std::to_string(store.add("n", -7)));
  record("cas create", S(store.compareSet("c", B(""), B("A"))));
  record("cas swap", S(store.compareSet("c", B("A"), B("B"))));
  record("cas mismatch", S(store.compareSet("c", B("Z"), B("C"))));
  record("cas missing", S(store.compareSet("m", B("Z"), B("C"))));
  record("check present", std::to_string(store.check({"k", "n", "c"})));
  record("check missing", std::to_string(store.check({"k", "m"})));
  record("check none", std::to_string(store.check({})));
  record("wait present", Attempt([&] {
           store.wait({"k", "c"}, 1s);
           return std::string("ok");
         }));
  record("num keys", std::to_string(store.getNumKeys()));
  record("delete", std::to_string(store.deleteKey("k")));
  record("delete again", std::to_string(store.deleteKey("k")));
  record("num keys", std::to_string(store.getNumKeys()));
  store.set("wk", B("v1"));
  store.set("wk", B("v2"));
  store.add("wc", 3);
  store.add("wc", 4);
  store.compareSet("wk", B("v2"), B("v3"));
  store.deleteKey("wk");
  for (const auto& event : log.WaitFor(6)) out.push_back(event);
  return out;
}

// Our server on its own loop thread for the scenario's duration.
std::vector<std::string> AgainstOurs() {
  boost::asio::io_context io;
  cpplaunch::StoreServerOptions options;
  options.bind_host = "::";
  auto server = std::make_unique<cpplaunch::StoreServer>(io, options);
  uint16_t port = server->port();
  std::thread loop([&] { io.run(); });
  std::vector<std::string> results;
  try {
    results = Scenario(port);
  } catch (const std::exception& error) {
    results.push_back(std::string("scenario failed: ") + error.what());
  }
  boost::asio::post(io, [&] {
    server.reset();
    io.stop();
  });
  loop.join();
  return results;
}

std::vector<std::string> AgainstLibTorch() {
  c10d::TCPStoreOptions options;
  options.port = 0;
  options.isServer = true;
  options.waitWorkers = false;
  options.timeout = 10s;
  c10d::TCPStore server("127.0.0.1", options);
  return Scenario(server.getPort());
}

}  // namespace

int main() {
  auto ours = AgainstOurs();
  auto theirs = AgainstLibTorch();
  int differences = ours.size() == theirs.size() ? 0 : 1;
  for (size_t i = 0; i < std::max(ours.size(), theirs.size()); ++i) {
    std::string mine = i < ours.size() ? ours[i] : "(missing)";
    std::string reference = i < theirs.size() ? theirs[i] : "(missing)";
    bool same = mine == reference;
    differences += same ? 0 : 1;
    std::printf("%s cpplaunch: %s | libtorch: %s\n", same ? "ok  " : "DIFF", mine.c_str(),
                reference.c_str());
  }
  std::printf("%zu results, %d differences\n", ours.size(), differences);
  return differences == 0 ? 0 : 1;
}
