#pragma once
// The connection behind an AsyncStoreClient (async_store_client.h) and its views, internal to
// the store: the socket, connecting and the handshakes, the deadline of the current operation,
// and the two ways of exchanging requests and replies: one round trip at a time (PyTorch's
// wire) or, on an agent connection after its handshake, tagged and pipelined (tag_framing.h)
// with one writer and one reader for every outstanding call.
//
// Threads: the client's executor only. Lifetime: shared by the client, its views and every
// coroutine or handler in flight, so that none touches freed state after the client is gone.
// Errors: StoreError (StoreTimeout, StoreHandshakeFailed) with one-line messages naming the
// command and the store; an error that breaks the connection closes it first.

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rendezvous/store/client/async_store_client.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/tag_framing.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

// What one AsyncStoreClient object may do on the shared connection: the owner's scope, or a
// view's (AsyncStoreClient(AsyncStoreClient&, milliseconds)).
struct StoreClientScope {
  uint64_t id = 0;
  bool owner = true;
  bool closed = false;
  std::chrono::milliseconds timeout{0};  // each operation's (Wait(): its cancellation's)
};

struct StoreConnection : std::enable_shared_from_this<StoreConnection> {
  using Clock = std::chrono::steady_clock;
  using Options = AsyncStoreClient::Options;
  template <class T>
  using Task = boost::asio::awaitable<T>;

  // A timeout this long means "no timeout": the wait ends when the key appears or on Close().
  static constexpr auto kForever = std::chrono::hours(24 * 365);

  // One outstanding request of an agent connection, found by its tag when the reply comes.
  struct Call {
    explicit Call(const boost::asio::any_io_executor& executor) : signal(executor) {}
    boost::asio::steady_timer signal;  // cancelled when the call is done
    bool done = false;
    Reply reply;
    std::string error;  // set: the call failed (the connection closed, or its scope)
    uint64_t scope = 0;
    uint32_t tag = 0;
    bool wait = false;  // a WAIT still pending on the wire
    void Finish(std::string failure = {}) {
      if (done) return;
      done = true;
      error = std::move(failure);
      signal.cancel();
    }
  };

  // Marks the connection busy for one untagged operation (or a connect); throws
  // std::logic_error if it already is.
  class Turn {
   public:
    explicit Turn(StoreConnection& connection, const char* what);
    ~Turn() { connection_.busy = false; }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    StoreConnection& connection_;
  };

  StoreConnection(const boost::asio::any_io_executor& executor, Options opts)
      : socket(executor), timer(executor), options(std::move(opts)) {}

  // "GET 'key' (+2 keys)", for messages.
  static std::string Describe(const Request& request);
  // Requests are built outside the coroutines: GCC 12 mis-compiles braced initializer lists
  // inside co_await expressions ("array used as initializer").
  static Request MakeRequest(Command command, std::vector<std::string> keys = {},
                             std::vector<Bytes> values = {});

  // Closes the socket (recording `reason` when it was open) and fails every pending call.
  void CloseWith(std::string reason);
  // Throws StoreError naming `what` and the closed reason unless the connection is open.
  void RequireOpen(const std::string& what);
  // Close() (of the client or the view) or the client's destruction came first.
  bool Ended(const StoreClientScope& scope) const;
  // A reply that arrived just before the client was closed or destroyed resumes its coroutine
  // afterwards: it must end with StoreError like every other pending operation, or the caller
  // would carry on with an object that may be gone (a rendezvous destroyed mid-join).
  void ThrowIfEnded(const StoreClientScope& scope, const std::string& what) const;
  Dialect dialect() const { return options.agent ? Dialect::kAgent : Dialect::kModern; }

  // ---- Connecting.
  // One TCP connection attempt to one address, bounded by `limit`. Returns "" or the reason.
  Task<std::string> TryConnect(const boost::asio::ip::tcp::endpoint& endpoint,
                               Clock::duration limit);
  // VALIDATE + PING: proves the peer is a TCPStore speaking the modern dialect.
  Task<void> Handshake();
  // AGENT_HELLO, the nonce, AGENT_PROOF + PING, the verdict and the echo (agent_handshake.h).
  Task<void> AgentHandshake();

  // ---- One operation at a time, as PyTorch's wire has no tags.
  // Sends one request and reads its reply under the operation timeout (tagged when `tagged`).
  Task<Reply> RoundTrip(const StoreClientScope& scope, Request request, uint64_t count = 0);
  Task<void> WriteAll(const std::string& bytes, const std::string& what);
  Task<Reply> ReadReply(ReplyShape shape, uint64_t count, const std::string& what);
  // Arms the deadline of the current operation: on expiry the socket's operations are
  // cancelled and the operation reports a timeout.
  void ArmDeadline(Clock::duration after);
  // Options::trace's line for an answered request sent at `sent`, when a trace is set.
  void Traced(const std::string& what, Clock::time_point sent) const;
  void Disarm();

  // ---- The tagged connection.
  // Takes every reply from here on (after the agent handshake).
  void StartReading();
  // A WAIT of its own on the shared connection; its timeout cancels only this wait (tagged
  // CANCEL_WAIT), whose reply then comes as WAIT_CANCELED, or STOP_WAITING if the keys won.
  Task<bool> TaggedWait(const StoreClientScope& scope, Request request,
                        std::chrono::milliseconds timeout);
  // Ends a view's calls: they fail with StoreError, and its pending WAITs are cancelled on the
  // wire (their replies, and the cancellations', are dropped).
  void EndScope(uint64_t scope);

  boost::asio::ip::tcp::socket socket;
  boost::asio::steady_timer timer;  // the deadline of the current operation
  Options options;
  std::string peer;
  std::string input;  // bytes received and not yet decoded
  std::string heard;  // the first bytes received on this connection (what answered a connect)
  std::array<char, 4096> read_buffer{};
  ReplyDecoder decoder;
  bool busy = false;
  bool open = false;
  bool timed_out = false;
  bool cancelled = false;   // Close() was called: Connect stops retrying
  uint64_t generation = 0;  // tells a stale timer expiry from the current one
  std::string closed_reason = "not connected";
  // Agent connections after the handshake: tagged, pipelined (tag_framing.h).
  bool tagged = false;
  TaggedReplyDecoder tagged_decoder;
  std::unordered_map<uint32_t, std::shared_ptr<Call>> calls;  // awaiting their replies
  uint32_t next_tag = 1;
  uint64_t next_scope = 1;
  std::string outbox;                               // requests not yet handed to the socket
  std::vector<std::shared_ptr<Call>> outbox_calls;  // requests without a reply: done once written
  std::string sending;
  std::vector<std::shared_ptr<Call>> sending_calls;
  bool send_in_flight = false;

 private:
  void FailCalls();
  [[noreturn]] void Fail(const std::string& what, boost::system::error_code ec);
  void CheckEcho(const Reply& reply, const Request& ping);

  uint32_t NewTag();
  void Send(std::string_view bytes, std::shared_ptr<Call> written = nullptr);
  void PumpWrite();
  void Broken(boost::system::error_code ec);
  bool DecodeReplies();
  std::shared_ptr<Call> Issue(const StoreClientScope& scope, const Request& request, uint64_t count,
                              const std::string& what);
  Task<bool> Await(std::shared_ptr<Call> call, Clock::duration limit);
  Reply Outcome(const StoreClientScope& scope, Call& call, const std::string& what);
  [[noreturn]] void TimedOut(const StoreClientScope& scope, Call& call, const std::string& what,
                             std::chrono::milliseconds limit);
  Task<Reply> TaggedRoundTrip(const StoreClientScope& scope, Request request, uint64_t count);
  void SendCancelWait(uint32_t wait_tag);
};

}  // namespace cpplaunch
