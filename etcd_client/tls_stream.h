#pragma once
// An Asio stream (AsyncReadStream and AsyncWriteStream, so Beast's HTTP reads and writes work
// on it) that speaks TLS over a beast::tcp_stream through a TlsSession from the TLS module
// (tls/tls_session.h). The socket I/O, timeouts and cancellation are the tcp_stream's: its
// expiry bounds every operation, and closing it ends a pending one.
//
// Threads: the executor's. One operation at a time (they share the buffers): HTTP/1.1's
// exchanges write a request, then read its answer.
// Errors: a TLS failure completes with TlsFailure(); error() then says why, in a few words.

#include <array>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>
#include <utility>

#include "etcd_client/tls/tls_session.h"

namespace cpplaunch::etcd {

// The error_code of a failed TLS step; its text is in TlsStream::error().
boost::system::error_code TlsFailure();

class TlsStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;

  TlsStream(const executor_type& executor, std::unique_ptr<TlsSession> session)
      : next_(executor), session_(std::move(session)) {}

  executor_type get_executor() { return next_.get_executor(); }
  boost::beast::tcp_stream& next_layer() { return next_; }
  const std::string& error() const { return error_; }

  template <class Token>
  auto async_handshake(Token&& token) {
    return Drive([](TlsSession& session) { return session.Handshake(); },
                 std::forward<Token>(token));
  }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    boost::asio::mutable_buffer first = FirstOf(buffers);
    return Drive(
        [first](TlsSession& session) {
          return session.Read(static_cast<char*>(first.data()), first.size());
        },
        std::forward<Token>(token));
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    // Beast hands over a header and body pieces: one TLS record for as many as fit.
    std::size_t size = boost::asio::buffer_copy(boost::asio::buffer(plain_), buffers);
    return Drive([this, size](TlsSession& session) { return session.Write(plain_.data(), size); },
                 std::forward<Token>(token));
  }

 private:
  template <class Buffers>
  static boost::asio::mutable_buffer FirstOf(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer piece(*it);
      if (piece.size() > 0) return piece;
    }
    return {};
  }

  // Runs `step` until it is done: its output sent, more input read while it asks for it.
  template <class Step>
  struct Op {
    TlsStream* stream;
    Step step;
    TlsStep result{};
    enum class Phase { kStart, kStepped, kSent, kReceived, kPosted } phase = Phase::kStart;
    bool waited = false;  // an I/O completion came: completing now does not run inside the start

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, std::size_t moved = 0) {
      if (phase == Phase::kPosted) return Finish(self);
      if (ec) return self.complete(ec, 0);
      if (phase == Phase::kReceived) stream->session_->Received(stream->in_.data(), moved);
      if (phase == Phase::kStart || phase == Phase::kReceived) result = step(*stream->session_);
      phase = Phase::kStepped;
      std::size_t out = stream->session_->TakeOutput(stream->out_.data(), stream->out_.size());
      if (out > 0) {
        phase = Phase::kSent;
        waited = true;
        boost::asio::async_write(stream->next_, boost::asio::buffer(stream->out_.data(), out),
                                 std::move(self));
        return;
      }
      if (result.want == TlsStep::Want::kInput) {
        phase = Phase::kReceived;
        waited = true;
        stream->next_.async_read_some(boost::asio::buffer(stream->in_), std::move(self));
        return;
      }
      if (!waited) {  // done without I/O: complete from the executor, not from the start
        phase = Phase::kPosted;
        boost::asio::post(stream->next_.get_executor(), std::move(self));
        return;
      }
      Finish(self);
    }

    template <class Self>
    void Finish(Self& self) {
      switch (result.want) {
        case TlsStep::Want::kClosed:
          return self.complete(boost::asio::error::eof, 0);
        case TlsStep::Want::kError:
          stream->error_ = result.error;
          return self.complete(TlsFailure(), 0);
        default:
          return self.complete({}, result.bytes);
      }
    }
  };

  template <class Step, class Token>
  auto Drive(Step step, Token&& token) {
    return boost::asio::async_compose<Token, void(boost::system::error_code, std::size_t)>(
        Op<Step>{this, std::move(step)}, token, next_);
  }

  boost::beast::tcp_stream next_;
  std::unique_ptr<TlsSession> session_;
  std::array<char, 16384> in_{};
  std::array<char, 16384> out_{};
  std::array<char, 16384> plain_{};
  std::string error_;
};

}  // namespace cpplaunch::etcd
