#pragma once
// One connection of the store server (store_server.h), internal to it: the socket, an
// incremental request decoder, the bytes waiting to be written, and flow control. The server
// (store_server_impl.h) owns the sessions, decodes and applies their input and queues their
// replies; the session reads, writes, pauses and resumes.
//
// Threads: the server's io_context thread only.
// Lifetime: lives while a handler holds it or the server's table does; `closed()` makes late
// handlers return without touching the server.

#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/wire/request_decoder.h"
#include "rendezvous/store/wire/tag_framing.h"

namespace cpplaunch {

class StoreServerImpl;

// A session stops reading (and decoding) while this much output is queued, so a client that
// pipelines requests without reading replies cannot grow memory; it resumes below a quarter.
constexpr size_t kPauseReadingAt = size_t{1024} * 1024;
// Output buffers larger than this are freed after use rather than kept for the next reply (and
// the server trims the heap once enough was freed), so a big reply does not stay in the process.
constexpr size_t kKeepBuffer = size_t{1024} * 1024;

// The peer's address for messages and the allow-list ("an unknown peer" when it has none). A
// dual-stack port sees IPv4 peers as ::ffff:a.b.c.d; they are named (and matched) as IPv4.
std::string PeerText(const boost::asio::ip::tcp::socket& socket);

class StoreSession : public std::enable_shared_from_this<StoreSession> {
 public:
  StoreSession(StoreServerImpl& server, boost::asio::ip::tcp::socket socket, ConnId id,
               const WireLimits& limits)
      : server_(server), socket_(std::move(socket)), id_(id), decoder_(limits), long_id_(id) {}

  ConnId id() const { return id_; }
  RequestDecoder& decoder() { return decoder_; }
  // Agent handshake state: the nonce sent, and whether the proof was accepted.
  std::string& nonce() { return nonce_; }
  bool agent() const { return agent_; }
  void set_agent() { agent_ = true; }
  // Tagged framing (agent connections): the tag the current request's reply must start with,
  // until it was sent; the pending WAITs by tag; the id a long request runs under (a slot for a
  // WAIT, else the session's own).
  void OweTag(uint32_t tag, bool owed) {
    reply_tag_ = tag;
    tag_owed_ = owed;
  }
  // Appends the owed tag to *out (once).
  void PayTag(std::string* out) {
    if (!tag_owed_) return;
    tag_owed_ = false;
    EncodeTag(reply_tag_, out);
  }
  bool tag_owed() const { return tag_owed_; }
  std::unordered_map<uint32_t, ConnId>& waits() { return waits_; }
  ConnId long_id() const { return long_id_; }
  void set_long_id(ConnId id) { long_id_ = id; }
  bool in_long() const { return long_; }
  // A wake-up that arrives while a long request's reply is being sent waits until it ends.
  void Hold(std::string_view bytes) { held_.append(bytes); }
  std::string TakeHeld() { return std::exchange(held_, {}); }
  std::string peer_address() const { return PeerText(socket_); }
  // "address:port" of the peer, for refusal lines ("a closed connection" once it has none).
  std::string peer() const;
  bool closed() const { return closed_; }
  bool accepting_input() const { return !closed_ && !closing_ && !paused_; }
  size_t queued() const { return out_.size() + writing_.size() - written_; }
  // The command being applied (for refusal lines; a long one spans several handlers).
  Command command() const { return command_; }
  void set_command(Command command) { command_ = command; }

  // Until the first byte, a buffer-less wait; afterwards asynchronous reads, which Asio tries
  // speculatively and which, unlike waits, do not re-register the socket with epoll each time.
  void StartReading();

  // The caller checked the budget; the bytes are charged to it until written or dropped.
  void Queue(std::string_view bytes);
  // The same for a big buffer the caller gives up: taken without a copy when nothing is queued.
  void Queue(std::string&& bytes);

  // Brings the budget's count of the input this session holds (its unfinished request, input
  // queued behind a paused one) up to date. False, with nothing charged, when the growth does
  // not fit the budget (leaving `keep_free`) or the connection's share: the caller refuses.
  bool ChargeInput(uint64_t keep_free);
  uint64_t input_held() const {
    return decoder_.held() + (pending_in_.empty() ? 0 : pending_in_.capacity());
  }

  // Input left undecoded while output is over the pause mark or a long request is applied.
  void Pause(std::string_view rest) {
    paused_ = true;
    pending_in_.assign(rest);
  }
  // A long request runs in slices (the server continues it); input waits until it ends.
  void BeginLong(std::string_view rest) {
    long_ = true;
    Pause(rest);
  }
  void EndLong() {
    long_ = false;
    MaybeResume();
  }
  // The next slice waits for the client to read: continue once the output is low again.
  void ContinueAfterWrite() { continue_after_write_ = true; }

  // Protocol error or failed request: send what is queued, then close.
  void CloseAfterFlush();

  // Hands queued output to the socket: a direct non-blocking write first (most replies are a
  // few bytes and the socket buffer has room), an asynchronous write for what remains.
  void Flush();

  // Closes the socket and gives back what the session held: its budget share and its buffers
  // (the one an asynchronous write still owns is freed when that write completes).
  void Shutdown();

 private:
  void MarkDirty();
  void OnRead(const boost::system::error_code& ec, size_t n);
  void ResizeBuffer(size_t last_read);
  void OnWritten(const boost::system::error_code& ec);
  void AfterWrite();
  void MaybeResume();
  void Charge(size_t bytes);
  void Uncharge(size_t bytes);
  void ReleaseIfLarge(std::string& buffer);

  StoreServerImpl& server_;
  boost::asio::ip::tcp::socket socket_;
  ConnId id_;
  Command command_ = Command::kGetNumKeys;
  size_t charged_ = 0;          // output bytes counted in the server's budget
  uint64_t input_charged_ = 0;  // input bytes counted in it (held for requests)
  RequestDecoder decoder_;
  std::string out_;      // queued, not yet handed to the socket
  std::string writing_;  // owned by the asynchronous write in flight
  size_t written_ = 0;   // bytes at the start of writing_ that were sent before it started
  std::string pending_in_;
  std::string nonce_;
  bool agent_ = false;
  uint32_t reply_tag_ = 0;
  bool tag_owed_ = false;
  std::unordered_map<uint32_t, ConnId> waits_;
  ConnId long_id_ = 0;
  std::string held_;
  std::vector<char> buffer_;
  bool read_armed_ = false;
  bool write_in_flight_ = false;
  bool dirty_ = false;
  bool paused_ = false;
  bool long_ = false;
  bool continue_after_write_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

}  // namespace cpplaunch
