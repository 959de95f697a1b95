#include "etcd_client/etcd_client.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <random>

#include "base/text.h"
#include "etcd_client/etcd_client_impl.h"
#include "etcd_client/etcd_json.h"
#include "etcd_client/etcd_wire.h"
#include "etcd_client/tls_module.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

// Pauses between rounds of the endpoint list, so that a cluster electing a leader is asked
// again soon without being flooded. Each is drawn at random from its upper half, so that the
// clients of many agents refused together do not come back together.
constexpr auto kFirstPause = std::chrono::milliseconds(25);
constexpr auto kLongestPause = std::chrono::milliseconds(400);
constexpr size_t kMostIdle = 8;

Task<void> Sleep(asio::any_io_executor executor, Clock::duration duration) {
  asio::steady_timer timer(executor, duration);
  boost::system::error_code ignored;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

// "etcd <what> refused by <member>: <etcd's message> (HTTP <status>)". The gateway's error
// body is JSON; gRPC's message is plain text, which ErrorMessage gives back as it is.
std::string Refusal(const std::string& what, const std::string& member, const std::string& body,
                    const std::string& code) {
  return "etcd " + what + " refused by " + member + ": " + json::ErrorMessage(body) + " (" + code +
         ")";
}

}  // namespace

std::string QuoteKey(const std::string& key) {
  std::string text = "'";
  for (char c : key.substr(0, 80)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\'' && c != '\\') {
      text += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      text += escaped;
    }
  }
  return text + (key.size() > 80 ? "...'" : "'");
}

struct Client::Impl::Attempt {
  std::string error;  // "" when etcd answered
  int status = 0;     // HTTP's, or the gateway's for a gRPC status
  std::string body;   // the answer, or etcd's error message
  std::string code;   // "HTTP 404", "gRPC NotFound": the status, for messages

  static Attempt Failed(std::string why) {
    Attempt attempt;
    attempt.error = std::move(why);
    return attempt;
  }
  static Attempt Http(int status, std::string body) {
    return {"", status, std::move(body), "HTTP " + std::to_string(status)};
  }
};

Client::Impl::Impl(asio::any_io_executor ex, ClientSettings s)
    : executor(std::move(ex)), settings(std::move(s)) {
  if (settings.endpoints.empty()) {
    throw EtcdError(EtcdError::Kind::kSetup, "no etcd endpoint given");
  }
  if (settings.https) tls = MakeTlsContext(settings.tls);
  grpc = !settings.https && settings.transport == Transport::kGrpc;
  wire = grpc ? &GrpcWire() : &GatewayWire();
  channels_.resize(settings.endpoints.size());
}

std::shared_ptr<HttpConnection> Client::Impl::NewConnection(size_t index) {
  auto connection =
      std::make_shared<HttpConnection>(executor, settings.endpoints[index], tls.get());
  std::erase_if(live_, [](const auto& weak) { return weak.expired(); });
  live_.push_back(connection);
  return connection;
}

std::shared_ptr<HttpConnection> Client::Impl::TakeIdle(size_t index) {
  const Endpoint& wanted = settings.endpoints[index];
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if ((*it)->endpoint().host == wanted.host && (*it)->endpoint().port == wanted.port) {
      auto connection = std::move(*it);
      idle_.erase(it);
      if (connection->is_open()) return connection;
      return TakeIdle(index);
    }
  }
  return nullptr;
}

void Client::Impl::Register(std::weak_ptr<Stoppable> stoppable) {
  std::erase_if(stoppables_, [](const auto& weak) { return weak.expired(); });
  stoppables_.push_back(std::move(stoppable));
}

void Client::Impl::Close() {
  if (closed) return;
  closed = true;
  idle_.clear();
  for (ChannelSlot& slot : channels_) {
    if (slot.connection) slot.connection->Close();
  }
  for (auto& weak : live_) {
    if (auto connection = weak.lock()) connection->Close();
  }
  // Stop() may run callbacks' destructors that touch this list: work on a copy.
  auto stoppables = std::move(stoppables_);
  for (auto& weak : stoppables) {
    if (auto stoppable = weak.lock()) stoppable->Stop();
  }
}

void Client::Impl::ThrowIfClosed(const std::string& what) const {
  if (closed) throw EtcdError(EtcdError::Kind::kClosed, "etcd " + what + ": the client was closed");
}

Task<std::shared_ptr<GrpcConnection>> Client::Impl::GrpcChannel(size_t index,
                                                                Clock::time_point deadline,
                                                                std::string* why) {
  ChannelSlot& slot = channels_[index];  // the vector never grows: the reference stays valid
  if (slot.connection && slot.connection->is_open()) co_return slot.connection;
  if (slot.connecting) {
    // Another call is connecting: one connection per member, whoever asks.
    auto connecting = slot.connecting;
    boost::system::error_code ignored;
    co_await connecting->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    if (slot.connection && slot.connection->is_open()) co_return slot.connection;
    *why = closed ? "closed" : slot.failure;
    co_return nullptr;
  }
  auto connection = std::make_shared<GrpcConnection>(executor, settings.endpoints[index]);
  slot.connection = connection;
  slot.connecting = std::make_shared<asio::steady_timer>(executor, Clock::time_point::max());
  Clock::time_point connect_by = std::min(deadline, Clock::now() + settings.connect_timeout);
  std::string failed = co_await connection->Connect(connect_by);
  auto connecting = std::move(slot.connecting);
  connecting->cancel();
  if (failed.empty()) co_return connection;
  slot.failure = failed;
  if (slot.connection == connection) slot.connection.reset();
  *why = std::move(failed);
  co_return nullptr;
}

Task<Client::Impl::Attempt> Client::Impl::TryGrpc(size_t index, const std::string& path,
                                                  const std::string& body,
                                                  Clock::time_point deadline) {
  std::string why;
  auto connection = co_await GrpcChannel(index, deadline, &why);
  if (!connection) co_return Attempt::Failed(why);
  GrpcConnection::Answer answer = co_await connection->Call(path, body, deadline);
  if (!answer.error.empty() && !connection->is_open() && !closed && Clock::now() < deadline) {
    // The member may have closed the connection since its last call: one fresh connection.
    connection = co_await GrpcChannel(index, deadline, &why);
    if (!connection) co_return Attempt::Failed(why);
    answer = co_await connection->Call(path, body, deadline);
  }
  if (!answer.error.empty()) co_return Attempt::Failed(answer.error);
  if (answer.status == 0) co_return Attempt::Http(200, std::move(answer.body));
  co_return Attempt{"", HttpStatusOfGrpc(answer.status), std::move(answer.message),
                    "gRPC " + GrpcStatusName(answer.status)};
}

Task<Client::Impl::Attempt> Client::Impl::TryOnce(size_t index, const std::string& path,
                                                  const std::string& body,
                                                  Clock::time_point deadline) {
  if (grpc) co_return co_await TryGrpc(index, path, body, deadline);
  if (auto connection = TakeIdle(index)) {
    HttpConnection::Answer answer = co_await connection->Post(path, body, deadline);
    if (answer.error.empty()) {
      if (connection->is_open() && idle_.size() < kMostIdle) idle_.push_back(connection);
      co_return Attempt::Http(answer.status, std::move(answer.body));
    }
    // Else the member may have closed the idle connection: one fresh connection below.
    if (closed) co_return Attempt::Failed(answer.error);
  }
  auto connection = NewConnection(index);
  Clock::time_point connect_by = std::min(deadline, Clock::now() + settings.connect_timeout);
  std::string why = co_await connection->Connect(connect_by);
  if (!why.empty()) co_return Attempt::Failed(why);
  HttpConnection::Answer answer = co_await connection->Post(path, body, deadline);
  if (answer.error.empty() && connection->is_open() && idle_.size() < kMostIdle) {
    idle_.push_back(connection);
  }
  if (!answer.error.empty()) co_return Attempt::Failed(answer.error);
  co_return Attempt::Http(answer.status, std::move(answer.body));
}

Clock::duration Client::Impl::Jitter(Clock::duration low, Clock::duration high) {
  if (high <= low) return low;
  std::uniform_int_distribution<Clock::rep> draw(0, (high - low).count());
  return low + Clock::duration(draw(random));
}

Client::Impl::Pacing::Pacing(Impl& owner)
    : impl(owner), attempt_timeout(owner.settings.attempt_timeout), pause(kFirstPause) {}

Clock::time_point Client::Impl::Pacing::AttemptBy(Clock::time_point deadline) const {
  // A lone member has no other to take over: sending it the request again would only queue
  // it twice. Its attempt lasts the whole request (a broken connection still ends it at once).
  if (impl.settings.endpoints.size() == 1) return deadline;
  return std::min(deadline, Clock::now() + attempt_timeout);
}

void Client::Impl::Pacing::Failed(Clock::time_point attempt_by) {
  unanswered = unanswered || Clock::now() >= attempt_by;
}

Clock::duration Client::Impl::Pacing::RoundPause() {
  Clock::duration wait = impl.Jitter(pause / 2, pause);
  pause = std::min<Clock::duration>(pause * 2, kLongestPause);
  if (unanswered) {
    // No member answered in time: they are busy (thousands of agents arriving at once), and the
    // request they did not answer is still in their queue. Asking again at once, as briefly,
    // would only add to it: the next round waits twice as long for an answer, after a pause of
    // up to half the last wait, drawn at random.
    wait = std::max(wait, impl.Jitter(Clock::duration::zero(), attempt_timeout / 2));
    attempt_timeout *= 2;
    unanswered = false;
  }
  return wait;
}

Task<std::string> Client::Impl::Call(std::string what, Rpc rpc, std::string body) {
  ThrowIfClosed(what);
  const std::string path = wire->path(rpc);
  const size_t count = settings.endpoints.size();
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline = started + settings.request_timeout;
  std::vector<std::string> failures(count);
  Pacing pacing(*this);
  size_t first = preferred;
  for (size_t attempt = 0;; ++attempt) {
    size_t index = (first + attempt) % count;
    Clock::time_point attempt_by = pacing.AttemptBy(deadline);
    Attempt answer = co_await TryOnce(index, path, body, attempt_by);
    ThrowIfClosed(what);
    const std::string& member = settings.endpoints[index].ToString();
    if (answer.error.empty() && answer.status < 500) {
      preferred = index;
      if (answer.status == 200) co_return std::move(answer.body);
      throw EtcdError(EtcdError::Kind::kRefused, Refusal(what, member, answer.body, answer.code));
    }
    pacing.Failed(attempt_by);
    Clock::time_point now = Clock::now();
    // An attempt cut short by the request's deadline says less than an earlier one.
    if (failures[index].empty() || now < deadline) {
      failures[index] = answer.error.empty() ? answer.code + ": " + json::ErrorMessage(answer.body)
                                             : answer.error;
    }
    if (now >= deadline) break;
    if ((attempt + 1) % count == 0) {
      co_await Sleep(executor, std::min<Clock::duration>(pacing.RoundPause(), deadline - now));
      ThrowIfClosed(what);
    }
  }
  std::string message = "etcd " + what + " failed on every endpoint (tried for " +
                        FormatTenths(Clock::now() - started) + "):";
  const char* separator = " ";
  for (size_t i = 0; i < count; ++i) {
    if (failures[i].empty()) continue;
    message += separator + settings.endpoints[i].ToString() + ": " + failures[i];
    separator = "; ";
  }
  throw EtcdError(EtcdError::Kind::kUnreachable, message);
}

Client::Client(asio::any_io_executor executor, ClientSettings settings)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(settings))) {}

Client::~Client() { impl_->Close(); }

Task<RangeResult> Client::Range(std::string key, std::string range_end) {
  auto impl = impl_;
  std::string what = "range " + QuoteKey(key);
  co_return impl->wire->parse_range(
      co_await impl->Call(what, Rpc::kRange, impl->wire->range_request(key, range_end)));
}

Task<int64_t> Client::Put(std::string key, std::string value, int64_t lease) {
  auto impl = impl_;
  std::string what = "put " + QuoteKey(key);
  co_return impl->wire->parse_put(
      co_await impl->Call(what, Rpc::kPut, impl->wire->put_request(key, value, lease)));
}

Task<int64_t> Client::Delete(std::string key, std::string range_end) {
  auto impl = impl_;
  std::string what = "delete " + QuoteKey(key);
  co_return impl->wire->parse_delete(
      co_await impl->Call(what, Rpc::kDeleteRange, impl->wire->delete_request(key, range_end)));
}

Task<TxnResult> Client::Txn(std::vector<Compare> compare, std::vector<TxnOp> success,
                            std::vector<TxnOp> failure) {
  auto impl = impl_;
  std::string what = "transaction";
  if (!compare.empty()) what += " on " + QuoteKey(compare.front().key);
  co_return impl->wire->parse_txn(
      co_await impl->Call(what, Rpc::kTxn, impl->wire->txn_request(compare, success, failure)));
}

Task<LeaseGrant> Client::Impl::GrantLease(std::chrono::seconds ttl) {
  co_return wire->parse_lease_grant(
      co_await Call("lease grant", Rpc::kLeaseGrant, wire->lease_grant_request(ttl)));
}

Task<std::chrono::seconds> Client::Impl::KeepAliveOnce(int64_t lease) {
  std::string what = "keep-alive of lease " + std::to_string(lease);
  co_return wire->parse_keep_alive(
      co_await Call(what, Rpc::kLeaseKeepAlive, wire->lease_request(lease)));
}

Task<void> Client::Impl::RevokeLease(int64_t lease) {
  std::string what = "revoke of lease " + std::to_string(lease);
  try {
    co_await Call(what, Rpc::kLeaseRevoke, wire->lease_request(lease));
  } catch (const EtcdError& error) {
    // Already gone is what was asked for.
    if (error.kind() != EtcdError::Kind::kRefused ||
        std::string_view(error.what()).find("lease not found") == std::string_view::npos) {
      throw;
    }
  }
}

Task<int64_t> Client::GrantLease(std::chrono::seconds ttl) {
  auto impl = impl_;
  co_return (co_await impl->GrantLease(ttl)).id;
}

Task<std::chrono::seconds> Client::KeepAliveOnce(int64_t lease) {
  auto impl = impl_;
  co_return co_await impl->KeepAliveOnce(lease);
}

Task<void> Client::RevokeLease(int64_t lease) {
  auto impl = impl_;
  co_await impl->RevokeLease(lease);
}

Task<void> Client::Compact(int64_t revision) {
  auto impl = impl_;
  std::string what = "compaction to revision " + std::to_string(revision);
  co_await impl->Call(what, Rpc::kCompact, impl->wire->compact_request(revision));
}

void Client::Close() { impl_->Close(); }
bool Client::closed() const { return impl_->closed; }
const ClientSettings& Client::settings() const { return impl_->settings; }
asio::any_io_executor Client::executor() const { return impl_->executor; }

}  // namespace cpplaunch::etcd
