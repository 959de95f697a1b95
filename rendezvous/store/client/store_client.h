#pragma once
// A blocking TCPStore client: one TCP connection to a store server speaking either dialect
// (ours, or PyTorch's own server for the legacy dialect).
//
// Blocking and deadlines: every call blocks the calling thread, using poll() with a deadline of
// `timeout` (per operation); Wait() takes its own timeout. Not thread-safe: one caller at a time.
// Errors: StoreError (connection refused until the deadline, closed, protocol error, a length
// from the server above the caps) and StoreTimeout; what() is one line naming the operation,
// the key(s) and the address. After an error the connection is closed; the next call
// reconnects (with the same retry policy as the constructor).

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "rendezvous/store/client/store.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

struct StoreClientOptions {
  std::string host = "127.0.0.1";  // name or IP literal (v4 or v6, without brackets)
  uint16_t port = 29500;
  // kModern (PyTorch >= 2.1: VALIDATE, then PING, CANCEL_WAIT on wait timeouts) for our own
  // server; kLegacy to talk to a PyTorch <= 2.0 server. Our server speaks both.
  Dialect dialect = Dialect::kModern;
  // Connecting is retried with backoff (10 ms doubling to 1 s) until this much time passed.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  // Deadline of each operation, and the default timeout of Wait()/Get().
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  // Prepended to every key on the wire, as c10d::TCPStore does ("/"), so that keys are shared
  // with PyTorch clients. Empty for raw keys.
  std::string key_prefix = "/";
  // Caps on lengths and counts the server sends.
  WireLimits limits;
};

class StoreClient final : public Store {
 public:
  // Connects (blocking; retries until options.connect_timeout). Throws StoreError/StoreTimeout.
  explicit StoreClient(StoreClientOptions options);
  ~StoreClient() override;
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  // Store
  void Set(const std::string& key, const Bytes& value) override;
  Bytes Get(const std::string& key) override;  // WAIT then GET, as PyTorch's client does
  int64_t Add(const std::string& key, int64_t delta) override;
  Bytes CompareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool Check(const std::vector<std::string>& keys) override;
  void Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool DeleteKey(const std::string& key) override;
  int64_t NumKeys() override;

  // Waits with the default timeout.
  void Wait(const std::vector<std::string>& keys) { Wait(keys, options_.timeout); }
  // Appends to the value (creating it). Modern servers, and ours in either dialect.
  void Append(const std::string& key, const Bytes& value);
  // WAIT for all keys, then MULTI_GET (one round trip for the values). Ours in either dialect.
  std::vector<Bytes> MultiGet(const std::vector<std::string>& keys);
  void MultiSet(const std::vector<std::pair<std::string, Bytes>>& pairs);
  // Round trip with a nonce (modern only); throws StoreError when the echo differs.
  void Ping();

  // Wait timeouts (and Get's wait) and the per-operation deadline.
  void set_timeout(std::chrono::milliseconds timeout) { options_.timeout = timeout; }
  std::chrono::milliseconds timeout() const { return options_.timeout; }
  const std::string& address() const { return address_; }  // "host:port", v6 in brackets
  Dialect dialect() const { return options_.dialect; }

 private:
  using Clock = std::chrono::steady_clock;

  void Connect();
  void EnsureConnected(const char* operation, const std::string& what);
  void Close();
  // Sends one request and, unless it has no reply, reads the reply (of ReplyShapeOf).
  Reply& Call(Request& request, const std::string& what, Clock::time_point deadline,
              uint64_t count = 0);
  void SendAll(const std::string& bytes, const char* operation, const std::string& what,
               Clock::time_point deadline);
  // Reads one reply of `shape` into reply_decoder_; returns false on deadline.
  bool Receive(ReplyShape shape, uint64_t count, const char* operation, const std::string& what,
               Clock::time_point deadline);
  void WaitKeys(const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                const char* operation);
  void CancelWait(const std::string& what, std::chrono::milliseconds timeout);
  [[noreturn]] void Fail(const char* operation, const std::string& what, const std::string& why);
  [[noreturn]] void FailTimeout(const char* operation, const std::string& what,
                                const std::string& why);
  std::string WireKey(const std::string& key) const { return options_.key_prefix + key; }
  Request& NewRequest(Command command);
  Clock::time_point Deadline() const { return Clock::now() + options_.timeout; }

  StoreClientOptions options_;
  std::string address_;
  UniqueFd fd_;  // invalid while disconnected
  Request request_;
  std::string out_;
  std::string in_;  // received, not yet decoded
  ReplyDecoder reply_decoder_;
};

}  // namespace cpplaunch
