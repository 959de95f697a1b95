#include "rendezvous/store/store_session.h"

#include <algorithm>
#include <boost/asio/write.hpp>

#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/store_server_impl.h"

namespace cpplaunch {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// Per-session read buffer: none until the first byte arrives (idle callback sockets cost
// nothing), then 2 KiB, doubled while reads fill it (large values) up to 64 KiB, and shrunk back
// when reads get small again.
constexpr size_t kMinReadBuffer = size_t{2} * 1024;
constexpr size_t kMaxReadBuffer = size_t{64} * 1024;

}  // namespace

std::string PeerText(const tcp::socket& socket) {
  error_code ec;
  auto peer = socket.remote_endpoint(ec);
  if (ec) return "an unknown peer";
  auto ip = peer.address();
  if (ip.is_v6() && ip.to_v6().is_v4_mapped()) {
    ip = asio::ip::make_address_v4(asio::ip::v4_mapped, ip.to_v6());
  }
  return ip.to_string();
}

std::string StoreSession::peer() const {
  error_code ec;
  auto remote = socket_.remote_endpoint(ec);
  if (ec) return "a closed connection";
  auto address = remote.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return Endpoint{address.to_string(), remote.port()}.ToString();
}

void StoreSession::StartReading() {
  if (!accepting_input() || read_armed_) return;
  read_armed_ = true;
  if (buffer_.empty()) {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      self->read_armed_ = false;
      if (self->closed_) return;
      if (ec) return self->server_.Close(*self);
      self->buffer_.resize(kMinReadBuffer);
      self->StartReading();
    });
    return;
  }
  socket_.async_read_some(
      asio::buffer(buffer_),
      [self = shared_from_this()](const error_code& ec, size_t n) { self->OnRead(ec, n); });
}

void StoreSession::Queue(std::string_view bytes) {
  out_.append(bytes);
  Charge(bytes.size());
  MarkDirty();
}

void StoreSession::Queue(std::string&& bytes) {
  if (!out_.empty()) return Queue(std::string_view(bytes));
  Charge(bytes.size());
  out_.swap(bytes);
  MarkDirty();
}

void StoreSession::MarkDirty() {
  if (!dirty_) {
    dirty_ = true;
    server_.MarkDirty(*this);
  }
}

void StoreSession::CloseAfterFlush() {
  closing_ = true;
  if (queued() == 0) server_.Close(*this);
}

void StoreSession::Flush() {
  dirty_ = false;
  if (closed_ || write_in_flight_ || out_.empty()) return;
  error_code ec;
  size_t written = socket_.write_some(asio::buffer(out_), ec);
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    return server_.Close(*this);
  }
  Uncharge(written);
  if (written == out_.size()) {
    out_.clear();
    ReleaseIfLarge(out_);
    return AfterWrite();
  }
  // The rest is written from where the direct write stopped: no copy of a big reply's tail.
  writing_.swap(out_);
  written_ = written;
  write_in_flight_ = true;
  asio::async_write(
      socket_, asio::buffer(writing_.data() + written, writing_.size() - written),
      [self = shared_from_this()](const error_code& error, size_t) { self->OnWritten(error); });
}

void StoreSession::Shutdown() {
  closed_ = true;
  error_code ignored;
  socket_.close(ignored);
  Uncharge(charged_);
  ReleaseIfLarge(out_);
  out_.clear();
  std::string().swap(pending_in_);
  // An unfinished request's buffers go now, not when the last handler lets the session go.
  server_.budget().RemoveHeld(input_charged_);
  input_charged_ = 0;
  decoder_.Release();
  if (!write_in_flight_) ReleaseIfLarge(writing_);
}

void StoreSession::OnRead(const error_code& ec, size_t n) {
  read_armed_ = false;
  if (closed_) return;
  if (ec) return server_.Close(*this);  // EOF or reset: the client is gone
  server_.OnInput(*this, std::string_view(buffer_.data(), n));
  server_.FlushDirty();
  // A flush that completed at once may have resumed this session and armed the next read
  // into buffer_ already; the buffer must not move under it.
  if (!read_armed_) ResizeBuffer(n);
  StartReading();
}

void StoreSession::ResizeBuffer(size_t last_read) {
  size_t size = buffer_.size();
  if (last_read == size && size < kMaxReadBuffer) {
    buffer_.resize(size * 2);
  } else if (last_read < size / 8 && size > kMinReadBuffer) {
    std::vector<char>(size / 2).swap(buffer_);
  }
}

void StoreSession::OnWritten(const error_code& ec) {
  write_in_flight_ = false;
  if (closed_) return ReleaseIfLarge(writing_);
  if (ec) return server_.Close(*this);
  Uncharge(writing_.size() - written_);
  writing_.clear();
  written_ = 0;
  ReleaseIfLarge(writing_);
  if (!out_.empty()) return Flush();
  AfterWrite();
}

void StoreSession::AfterWrite() {
  if (closing_) return server_.Close(*this);
  if (continue_after_write_ && queued() < kPauseReadingAt / 4) {
    continue_after_write_ = false;
    server_.ContinueLong(*this);
    server_.FlushDirty();
    return;
  }
  MaybeResume();
}

void StoreSession::MaybeResume() {
  if (paused_ && !long_ && !closed_ && queued() < kPauseReadingAt / 4) {
    paused_ = false;
    std::string rest = std::move(pending_in_);
    pending_in_.clear();
    server_.OnInput(*this, rest);
    server_.FlushDirty();
    StartReading();
  }
}

bool StoreSession::ChargeInput(uint64_t keep_free) {
  const uint64_t held = input_held();
  StoreBudget& budget = server_.budget();
  if (held <= input_charged_) {
    budget.RemoveHeld(input_charged_ - held);
    input_charged_ = held;
    return true;
  }
  const uint64_t more = held - input_charged_;
  if (held > budget.limits().max_connection_bytes || !budget.CanStore(more, keep_free)) {
    return false;
  }
  budget.AddHeld(more);
  input_charged_ = held;
  return true;
}

void StoreSession::Charge(size_t bytes) {
  charged_ += bytes;
  server_.budget().AddQueued(bytes);
}

void StoreSession::Uncharge(size_t bytes) {
  bytes = std::min(bytes, charged_);
  charged_ -= bytes;
  server_.budget().RemoveQueued(bytes);
}

// A buffer that grew for a big reply is freed, not kept at its size for small ones.
void StoreSession::ReleaseIfLarge(std::string& buffer) {
  if (buffer.capacity() <= kKeepBuffer || !buffer.empty()) return;
  const size_t capacity = buffer.capacity();
  std::string().swap(buffer);
  server_.Released(capacity);
}

}  // namespace cpplaunch
