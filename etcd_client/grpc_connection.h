#pragma once
// One HTTP/2 connection (plain TCP, "h2c") to one etcd member that carries gRPC calls: any
// number at once, each on a stream of its own, so that an agent's requests, watch and lease
// renewals share one connection and the member one descriptor. It knows nothing of etcd's
// messages: a call sends one message (the 5-byte gRPC framing is added here) and half-closes,
// then reads the answer's messages and its status. The framing, HPACK and flow control are
// nghttp2's; the socket is Asio's.
//
// Threads: the executor's thread. Errors: nothing throws; a failure comes back as one phrase
// ("Connection refused", "no answer within 1.0 s"), and a broken connection ends every call on
// it with that phrase. Lifetime: Close() ends every pending call at once ("closed").

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/asio_coroutine.h"
#include "etcd_client/etcd_types.h"

namespace cpplaunch::etcd {

class GrpcConnection {
 public:
  using Clock = std::chrono::steady_clock;

  struct Answer {
    std::string error;    // "" when the member answered the call
    int status = 0;       // the gRPC status (0: OK)
    std::string message;  // grpc-message, percent-decoded (with a status other than 0)
    std::string body;     // the first message of the answer (Call only)
    int32_t stream = 0;   // the call's stream (OpenStream only, while it runs)
  };

  GrpcConnection(boost::asio::any_io_executor executor, Endpoint endpoint);
  ~GrpcConnection();
  GrpcConnection(const GrpcConnection&) = delete;
  GrpcConnection& operator=(const GrpcConnection&) = delete;

  const Endpoint& endpoint() const;
  // Connected, and the member has not said it takes no new calls (GOAWAY).
  bool is_open() const;

  // Resolves and connects before `deadline`, and sends the HTTP/2 preface. Returns "" or why
  // not.
  boost::asio::awaitable<std::string> Connect(Clock::time_point deadline);
  // Calls `path` ("/etcdserverpb.KV/Range") with one message and reads the whole answer before
  // `deadline`; past it the call is cancelled. When nothing at all arrived on the connection
  // meanwhile, it is taken for dead and closed.
  boost::asio::awaitable<Answer> Call(std::string path, std::string message,
                                      Clock::time_point deadline);
  // Starts a streaming call (a watch) with one message and waits for the answer's headers
  // before `deadline`. An answer ended at once (an error status) comes back as Call's would;
  // otherwise `stream` names the call for ReadStream and CancelStream.
  boost::asio::awaitable<Answer> OpenStream(std::string path, std::string message,
                                            Clock::time_point deadline);
  // The stream's next messages, appended to *out, without a deadline (TCP keep-alive probes
  // notice a vanished member). Returns "" or why the stream ended ("the member ended the
  // stream", with etcd's status message when it gave one).
  boost::asio::awaitable<std::string> ReadStream(int32_t stream, std::vector<std::string>* out);
  // Ends the stream (RST_STREAM CANCEL); a pending ReadStream returns "cancelled".
  void CancelStream(int32_t stream);
  void Close();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cpplaunch::etcd
