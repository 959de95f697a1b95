#pragma once
// One HTTP/1.1 keep-alive connection (plain TCP or TLS) to one etcd member, for the etcd client:
// POSTs of JSON bodies, and one streamed answer (a watch). It knows nothing of etcd's JSON.
//
// Threads: the executor's thread. One exchange at a time (the client gives each pending request
// a connection of its own).
// Errors: nothing throws; failures come back as one phrase ("Connection refused", "no answer
// within 1.0 s", "certificate verify failed"), and the connection is then closed.
// Lifetime: Close() ends a pending operation at once (it then reports "closed").

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "base/asio_coroutine.h"
#include "etcd_client/etcd_types.h"
#include "etcd_client/tls/tls_session.h"

namespace cpplaunch::etcd {

class HttpConnection {
 public:
  using Clock = std::chrono::steady_clock;

  struct Answer {
    std::string error;  // "" when an HTTP answer came
    int status = 0;
    std::string body;  // the whole body (OpenStream: only when the status is not 200)
  };

  // `tls`: null for plain http; otherwise borrowed, and must outlive the connection.
  HttpConnection(boost::asio::any_io_executor executor, Endpoint endpoint, TlsContext* tls);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  const Endpoint& endpoint() const;
  bool is_open() const;
  // Whether an exchange already ran on it (a failure may then be the member's idle close).
  bool reused() const;

  // Resolves, connects and (https) completes the TLS handshake, verifying the member's name,
  // before `deadline`. Returns "" or why not.
  boost::asio::awaitable<std::string> Connect(Clock::time_point deadline);
  // Sends `body` to `target` and reads the whole answer, before `deadline`.
  boost::asio::awaitable<Answer> Post(std::string target, std::string body,
                                      Clock::time_point deadline);
  // Sends `body` to `target` and reads the answer's header before `deadline`; the body then
  // comes through ReadStream, without a deadline (TCP keep-alive probes notice a vanished
  // member). A status other than 200 comes with its whole body.
  boost::asio::awaitable<Answer> OpenStream(std::string target, std::string body,
                                            Clock::time_point deadline);
  // The next bytes of the streamed body, appended to *out. Returns "" or why the stream ended
  // ("the member ended the stream" at its normal end).
  boost::asio::awaitable<std::string> ReadStream(std::string* out);
  void Close();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cpplaunch::etcd
