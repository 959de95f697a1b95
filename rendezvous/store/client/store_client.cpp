#include "rendezvous/store/client/store_client.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "base/fd_io.h"
#include "base/socket_io.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{10};
constexpr milliseconds kMaxBackoff{1000};
constexpr size_t kReceiveChunk = size_t{64} * 1024;

// "'a'" or "['a', 'b', ...]" for messages; long lists are cut.
std::string DescribeKeys(const std::vector<std::string>& keys) {
  if (keys.size() == 1) return "'" + keys[0] + "'";
  std::string text = "[";
  for (size_t i = 0; i < keys.size() && i < 8; ++i) text += (i ? ", '" : "'") + keys[i] + "'";
  if (keys.size() > 8) text += ", ... " + std::to_string(keys.size() - 8) + " more";
  return text + "]";
}

// What is left of `deadline`, for the fd layer's timeouts (zero or less: already passed).
milliseconds Left(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::ceil<milliseconds>(deadline - std::chrono::steady_clock::now());
}

// Connects to one resolved address before the deadline; on failure *error says why. A timeout
// keeps the reason an earlier address gave (a refusal says more than the timeout).
UniqueFd ConnectOne(const addrinfo& address, std::chrono::steady_clock::time_point deadline,
                    std::string* error) {
  ConnectResult result =
      ConnectTcp(address.ai_family, address.ai_addr, address.ai_addrlen, Left(deadline));
  if (result.timed_out) {
    if (error->empty()) *error = "connect timed out";
  } else if (!result.fd) {
    *error = ErrorText(result.error);
  }
  return std::move(result.fd);
}

}  // namespace

StoreClient::StoreClient(StoreClientOptions options)
    : options_(std::move(options)),
      address_(Endpoint{options_.host, options_.port}.ToString()),
      reply_decoder_(options_.limits) {
  if (options_.dialect == Dialect::kUndecided) options_.dialect = Dialect::kModern;
  Connect();
}

StoreClient::~StoreClient() { Close(); }

void StoreClient::Close() {
  fd_.reset();
  in_.clear();
}

// Connect, then (modern) VALIDATE + PING, retried with backoff until the connect deadline: the
// server may not be listening yet, or may be at its connection limit.
void StoreClient::Connect() {
  auto deadline = Clock::now() + options_.connect_timeout;
  milliseconds backoff = kFirstBackoff;
  std::string last_error;
  for (;;) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc =
        ::getaddrinfo(options_.host.c_str(), std::to_string(options_.port).c_str(), &hints, &found);
    if (rc != 0) {
      last_error = std::string("cannot resolve host: ") + ::gai_strerror(rc);
    }
    // A name can resolve to both families (localhost: ::1 and 127.0.0.1) while the server
    // listens on one of them, so every address is tried before backing off.
    for (addrinfo* a = found; a != nullptr && !fd_; a = a->ai_next) {
      fd_ = ConnectOne(*a, deadline, &last_error);
    }
    if (found != nullptr) ::freeaddrinfo(found);
    if (fd_) {
      try {
        if (options_.dialect == Dialect::kModern) {
          NewRequest(Command::kValidate).u32 = kValidateMagic;
          Call(request_, "", deadline);
          Ping();
        }
        return;
      } catch (const StoreError& error) {
        last_error = error.what();
        Close();
      }
    }
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) {
      throw StoreTimeout("cannot connect to the store at " + address_ + " within " +
                         std::to_string(options_.connect_timeout.count()) + "ms: " + last_error);
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, left));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

void StoreClient::EnsureConnected(const char* operation, const std::string& what) {
  if (fd_) return;
  try {
    Connect();
  } catch (const StoreTimeout& error) {
    FailTimeout(operation, what, error.what());
  }
}

Request& StoreClient::NewRequest(Command command) {
  request_.Clear();
  request_.command = command;
  return request_;
}

void StoreClient::Fail(const char* operation, const std::string& what, const std::string& why) {
  Close();
  std::string target = what.empty() ? "" : " " + what;
  throw StoreError("store " + std::string(operation) + target + " on " + address_ + ": " + why);
}

void StoreClient::FailTimeout(const char* operation, const std::string& what,
                              const std::string& why) {
  Close();
  std::string target = what.empty() ? "" : " " + what;
  throw StoreTimeout("store " + std::string(operation) + target + " on " + address_ + ": " + why);
}

Reply& StoreClient::Call(Request& request, const std::string& what, Clock::time_point deadline,
                         uint64_t count) {
  const char* operation = CommandName(request.command);
  if (!fd_) Fail(operation, what, "not connected");
  out_.clear();
  // No Close() here: nothing was sent, so the connection is still in step with the server.
  if (!EncodeRequest(options_.dialect, request, &out_)) {
    throw StoreError("store " + std::string(operation) + " on " + address_ +
                     ": not available in the " +
                     (options_.dialect == Dialect::kLegacy ? "legacy" : "modern") + " dialect");
  }
  SendAll(out_, operation, what, deadline);
  ReplyShape shape = ReplyShapeOf(request.command);
  if (shape != ReplyShape::kNone && !Receive(shape, count, operation, what, deadline)) {
    FailTimeout(operation, what,
                "no reply within " + std::to_string(options_.timeout.count()) + "ms");
  }
  return reply_decoder_.reply();
}

void StoreClient::SendAll(const std::string& bytes, const char* operation, const std::string& what,
                          Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    IoResult result = SendSome(fd_.get(), std::string_view(bytes).substr(sent));
    sent += result.bytes;
    if (result.ok()) continue;
    if (result.status == IoResult::Status::kError) {
      Fail(operation, what, "send failed: " + ErrorText(result.error));
    }
    if (!WaitFd(fd_.get(), POLLOUT, Left(deadline))) {
      FailTimeout(operation, what,
                  "could not send within " + std::to_string(options_.timeout.count()) + "ms");
    }
  }
}

bool StoreClient::Receive(ReplyShape shape, uint64_t count, const char* operation,
                          const std::string& what, Clock::time_point deadline) {
  reply_decoder_.Expect(shape, count);
  DecodeResult result{DecodeStatus::kNeedMore, 0};
  if (!in_.empty()) {
    result = reply_decoder_.Feed(in_);
    in_.erase(0, result.consumed);
  }
  char buffer[kReceiveChunk];
  while (result.status == DecodeStatus::kNeedMore) {
    IoResult got = RecvSome(fd_.get(), buffer, sizeof buffer);
    if (got.ok()) {
      std::string_view bytes(buffer, got.bytes);
      result = reply_decoder_.Feed(bytes);
      // Bytes beyond this reply start the next one (CANCEL_WAIT's "00 01" can come in one read).
      in_.append(bytes.substr(result.consumed));
      continue;
    }
    if (got.status == IoResult::Status::kEof) {
      Fail(operation, what, "the server closed the connection");
    }
    if (got.status == IoResult::Status::kError) {
      Fail(operation, what, "receive failed: " + ErrorText(got.error));
    }
    // The connection stays open on a deadline: WaitKeys still cancels its WAIT on it.
    if (!WaitFd(fd_.get(), POLLIN, Left(deadline))) return false;
  }
  if (result.status == DecodeStatus::kMalformed) {
    Fail(operation, what, "bad reply: " + reply_decoder_.error());
  }
  return true;
}

// ---- Store operations

void StoreClient::Set(const std::string& key, const Bytes& value) {
  EnsureConnected("SET", "'" + key + "'");
  Request& request = NewRequest(Command::kSet);
  request.keys = {WireKey(key)};
  request.values = {value};
  Call(request, "'" + key + "'", Deadline());
}

Bytes StoreClient::Get(const std::string& key) {
  WaitKeys({key}, options_.timeout, "GET");
  Request& request = NewRequest(Command::kGet);
  request.keys = {WireKey(key)};
  return std::move(Call(request, "'" + key + "'", Deadline()).values.at(0));
}

int64_t StoreClient::Add(const std::string& key, int64_t delta) {
  EnsureConnected("ADD", "'" + key + "'");
  Request& request = NewRequest(Command::kAdd);
  request.keys = {WireKey(key)};
  request.number = delta;
  return Call(request, "'" + key + "'", Deadline()).number;
}

Bytes StoreClient::CompareSet(const std::string& key, const Bytes& expected, const Bytes& desired) {
  EnsureConnected("COMPARE_SET", "'" + key + "'");
  Request& request = NewRequest(Command::kCompareSet);
  request.keys = {WireKey(key)};
  request.values = {expected, desired};
  return std::move(Call(request, "'" + key + "'", Deadline()).values.at(0));
}

bool StoreClient::Check(const std::vector<std::string>& keys) {
  std::string what = DescribeKeys(keys);
  EnsureConnected("CHECK", what);
  Request& request = NewRequest(Command::kCheck);
  for (const auto& key : keys) request.keys.push_back(WireKey(key));
  return Call(request, what, Deadline()).u8 == kCheckReady;
}

void StoreClient::Wait(const std::vector<std::string>& keys, milliseconds timeout) {
  WaitKeys(keys, timeout, "WAIT");
}

// Sends WAIT and reads STOP_WAITING. On timeout, modern: CANCEL_WAIT, then read 01 (or 00 01
// when the keys arrived meanwhile, which counts as success); legacy has no cancel, so the
// connection is dropped: a late STOP_WAITING would otherwise desynchronise it (the 1.13 bug).
void StoreClient::WaitKeys(const std::vector<std::string>& keys, milliseconds timeout,
                           const char* operation) {
  std::string what = DescribeKeys(keys);
  EnsureConnected(operation, what);
  Request& request = NewRequest(Command::kWait);
  for (const auto& key : keys) request.keys.push_back(WireKey(key));
  out_.clear();
  // WAIT exists in both dialects, so encoding cannot fail. Not Call(): the reply must be read
  // with this wait's own timeout, not the per-operation deadline.
  EncodeRequest(options_.dialect, request, &out_);
  SendAll(out_, operation, what, Deadline());
  bool arrived = Receive(ReplyShape::kU8, 0, operation, what, Clock::now() + timeout);
  if (!arrived) {
    if (options_.dialect == Dialect::kModern && fd_) return CancelWait(what, timeout);
    FailTimeout(operation, what,
                "timed out after " + std::to_string(timeout.count()) + "ms waiting for the keys");
  }
  if (reply_decoder_.reply().u8 != kStopWaiting) {
    Fail(operation, what, "unexpected WAIT reply " + std::to_string(reply_decoder_.reply().u8));
  }
}

void StoreClient::CancelWait(const std::string& what, milliseconds timeout) {
  Request& cancel = NewRequest(Command::kCancelWait);
  uint8_t answer = Call(cancel, what, Deadline()).u8;
  if (answer == kStopWaiting) {  // the keys arrived just before the cancel
    if (!Receive(ReplyShape::kU8, 0, "CANCEL_WAIT", what, Deadline()) ||
        reply_decoder_.reply().u8 != kWaitCanceled) {
      Fail("CANCEL_WAIT", what, "expected WAIT_CANCELED after STOP_WAITING");
    }
    return;
  }
  if (answer != kWaitCanceled) Fail("CANCEL_WAIT", what, "unexpected reply");
  throw StoreTimeout("store WAIT " + what + " on " + address_ + ": timed out after " +
                     std::to_string(timeout.count()) + "ms waiting for the keys");
}

bool StoreClient::DeleteKey(const std::string& key) {
  EnsureConnected("DELETE_KEY", "'" + key + "'");
  Request& request = NewRequest(Command::kDeleteKey);
  request.keys = {WireKey(key)};
  return Call(request, "'" + key + "'", Deadline()).number == 1;
}

int64_t StoreClient::NumKeys() {
  EnsureConnected("GETNUMKEYS", "");
  return Call(NewRequest(Command::kGetNumKeys), "", Deadline()).number;
}

void StoreClient::Append(const std::string& key, const Bytes& value) {
  EnsureConnected("APPEND", "'" + key + "'");
  Request& request = NewRequest(Command::kAppend);
  request.keys = {WireKey(key)};
  request.values = {value};
  Call(request, "'" + key + "'", Deadline());
}

std::vector<Bytes> StoreClient::MultiGet(const std::vector<std::string>& keys) {
  WaitKeys(keys, options_.timeout, "MULTI_GET");
  Request& request = NewRequest(Command::kMultiGet);
  for (const auto& key : keys) request.keys.push_back(WireKey(key));
  return std::move(Call(request, DescribeKeys(keys), Deadline(), keys.size()).values);
}

void StoreClient::MultiSet(const std::vector<std::pair<std::string, Bytes>>& pairs) {
  std::vector<std::string> keys;
  keys.reserve(pairs.size());
  for (const auto& pair : pairs) keys.push_back(pair.first);
  std::string what = DescribeKeys(keys);
  EnsureConnected("MULTI_SET", what);
  Request& request = NewRequest(Command::kMultiSet);
  for (const auto& [key, value] : pairs) {
    request.keys.push_back(WireKey(key));
    request.values.push_back(value);
  }
  Call(request, what, Deadline());
}

void StoreClient::Ping() {
  EnsureConnected("PING", "");
  // The pid, as PyTorch's client uses: any value works, the server only echoes it.
  auto nonce = static_cast<uint32_t>(::getpid());
  NewRequest(Command::kPing).u32 = nonce;
  uint32_t echo = Call(request_, "", Deadline()).u32;
  if (echo != nonce) {
    Fail("PING", "",
         "the server echoed " + std::to_string(echo) + " instead of " + std::to_string(nonce));
  }
}

}  // namespace cpplaunch
