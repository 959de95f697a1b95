#include "rendezvous/store/client/async_store_client.h"

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <stdexcept>

#include "base/text.h"
#include "rendezvous/store/client/store_connection.h"
#include "rendezvous/store/endpoint.h"
#include "rendezvous/store/owner_table.h"
#include "rendezvous/store/peer_answer.h"

// The client's operations: each builds its request and runs it on the shared connection
// (store_connection.h); Connect retries and Wait's untagged cancellation live here.

namespace cpplaunch {
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kFirstRetryPause = std::chrono::milliseconds(50);
constexpr auto kLongestRetryPause = std::chrono::milliseconds(1000);

Request KeyRequest(Command command, std::string key) {
  Request request;
  request.command = command;
  request.keys.push_back(std::move(key));
  return request;
}

Request KeyValueRequest(Command command, std::string key, Bytes value) {
  Request request = KeyRequest(command, std::move(key));
  request.values.push_back(std::move(value));
  return request;
}

// Built outside the coroutine (StoreConnection::MakeRequest says why).
Request ArmRequest(const AsyncStoreClient::Arming& arming) {
  Request request;
  request.command = Command::kArm;
  request.keys = {arming.end_key, arming.beat_key, arming.armed_key, arming.count_key,
                  arming.all_armed_key};
  request.values.push_back(arming.will);
  request.number = arming.members;
  return request;
}

}  // namespace

AsyncStoreClient::AsyncStoreClient(const asio::any_io_executor& executor)
    : AsyncStoreClient(executor, Options{}) {}

AsyncStoreClient::AsyncStoreClient(const asio::any_io_executor& executor, const Options& options)
    : impl_(std::make_shared<StoreConnection>(executor, options)),
      scope_(std::make_shared<StoreClientScope>(
          StoreClientScope{0, true, false, options.operation_timeout})) {}

AsyncStoreClient::AsyncStoreClient(AsyncStoreClient& owner,
                                   std::chrono::milliseconds operation_timeout)
    : impl_(owner.impl_),
      scope_(std::make_shared<StoreClientScope>(
          StoreClientScope{impl_->next_scope++, false, false, operation_timeout})) {
  if (!impl_->options.agent) {
    throw std::logic_error("AsyncStoreClient: a view needs an agent connection (tagged)");
  }
}

AsyncStoreClient::~AsyncStoreClient() {
  if (!scope_->owner) {
    Close();
    return;
  }
  impl_->cancelled = true;
  impl_->CloseWith("client destroyed");
}

void AsyncStoreClient::Close() {
  if (!scope_->owner) {
    if (scope_->closed) return;
    scope_->closed = true;
    return impl_->EndScope(scope_->id);
  }
  scope_->closed = true;
  impl_->cancelled = true;
  impl_->CloseWith("the client was closed");
}
bool AsyncStoreClient::cancelled() const { return impl_->Ended(*scope_); }

std::function<bool()> AsyncStoreClient::ClosedProbe() const {
  return [impl = impl_, scope = scope_] { return impl->Ended(*scope); };
}
bool AsyncStoreClient::connected() const { return impl_->open && !scope_->closed; }
const std::string& AsyncStoreClient::peer() const { return impl_->peer; }

std::string AsyncStoreClient::local_address() const {
  error_code ec;
  auto endpoint = impl_->socket.local_endpoint(ec);
  if (ec) return "";
  auto address = endpoint.address();
  // A v4-mapped address (store named as ::ffff:a.b.c.d) is given in the IPv4 form other hosts
  // can connect to.
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}

AsyncStoreClient::Task<void> AsyncStoreClient::Connect(std::string host, int port,
                                                       Clock::time_point deadline) {
  // Every coroutine holds its own reference: the client may be destroyed while it is suspended,
  // and the completions that resume it still touch the connection.
  auto impl = impl_;
  if (!scope_->owner) throw std::logic_error("AsyncStoreClient: Connect() on a view");
  StoreConnection::Turn turn(*impl, "connect");
  if (impl->cancelled) throw StoreError("connect: the client was closed");
  impl->peer = Endpoint{host, port}.ToString();
  impl->input.clear();
  const auto started = Clock::now();
  auto pause = std::chrono::duration_cast<Clock::duration>(kFirstRetryPause);
  tcp::resolver resolver(impl->socket.get_executor());
  std::string last_error = "no attempt was made";
  std::string resolver_error;  // the last resolve's failure; "" once the name resolved
  for (;;) {
    error_code ec;
    auto results = co_await resolver.async_resolve(host, std::to_string(port),
                                                   asio::redirect_error(asio::use_awaitable, ec));
    resolver_error = ec ? ec.message() : "";
    if (ec) {
      last_error = "cannot resolve '" + host + "': " + ec.message();
    } else {
      for (const auto& entry : results) {
        auto left = deadline - Clock::now();
        // Each address gets at least a short try even past the deadline, and at most
        // operation_timeout, so one address that drops packets cannot use up the whole deadline.
        auto limit = std::min<Clock::duration>(std::max<Clock::duration>(left, kFirstRetryPause),
                                               impl->options.operation_timeout);
        std::string reason = co_await impl->TryConnect(entry.endpoint(), limit);
        if (impl->cancelled) break;
        if (reason.empty()) {
          // Open before the handshake, so that its failure is recorded as the closed reason.
          impl->open = true;
          impl->heard.clear();
          try {
            if (impl->options.agent) {
              co_await impl->AgentHandshake();
              // From here on every request is tagged and one reader takes every reply.
              impl->tagged = true;
              impl->StartReading();
            } else {
              co_await impl->Handshake();
            }
          } catch (const StoreHandshakeFailed&) {
            throw;
          } catch (const StoreTimeout&) {
            throw;  // silence is not an answer: a slow store, or a service that waits for more
          } catch (const StoreError& error) {
            // With what answered, so that the caller can tell another service from a store;
            // a handshake that Close() (or the destruction) broke is reported as closed below.
            if (!impl->cancelled)
              throw StoreHandshakeFailed(error.what(), QuoteAnswer(impl->heard));
          }
          // Closed or destroyed during the handshake (its last reply may have come in just
          // before): not connected.
          if (!impl->cancelled) co_return;
          last_error = "the client was closed";
          break;
        }
        last_error = reason;
      }
    }
    auto now = Clock::now();
    if (now >= deadline || impl->cancelled) break;
    impl->timer.expires_after(std::min(pause, deadline - now));  // Close() cancels it
    co_await impl->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (impl->cancelled) break;
    pause = std::min<Clock::duration>(pause * 2, kLongestRetryPause);
  }
  impl->closed_reason = last_error;
  std::string message = "cannot reach the store at " + impl->peer + " (tried for " +
                        FormatTenths(Clock::now() - started) + "): " + last_error;
  if (!resolver_error.empty()) throw StoreNameUnresolved(message, resolver_error);
  throw StoreError(message);
}

AsyncStoreClient::Task<void> AsyncStoreClient::Set(std::string key, Bytes value) {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope,
                           KeyValueRequest(Command::kSet, std::move(key), std::move(value)));
}

AsyncStoreClient::Task<void> AsyncStoreClient::Append(std::string key, Bytes value) {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope,
                           KeyValueRequest(Command::kAppend, std::move(key), std::move(value)));
}

AsyncStoreClient::Task<Bytes> AsyncStoreClient::Get(std::string key) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, KeyRequest(Command::kGet, std::move(key)));
  co_return std::move(reply.values.at(0));
}

AsyncStoreClient::Task<int64_t> AsyncStoreClient::Add(std::string key, int64_t delta) {
  auto impl = impl_;
  auto scope = scope_;
  Request request = KeyRequest(Command::kAdd, std::move(key));
  request.number = delta;
  Reply reply = co_await impl->RoundTrip(*scope, std::move(request));
  co_return reply.number;
}

AsyncStoreClient::Task<Bytes> AsyncStoreClient::CompareSet(std::string key, Bytes expected,
                                                           Bytes desired) {
  auto impl = impl_;
  Request request = KeyValueRequest(Command::kCompareSet, std::move(key), std::move(expected));
  request.values.push_back(std::move(desired));
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, std::move(request));
  co_return std::move(reply.values.at(0));
}

AsyncStoreClient::Task<bool> AsyncStoreClient::Check(std::vector<std::string> keys) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(
      *scope, StoreConnection::MakeRequest(Command::kCheck, std::move(keys)));
  co_return reply.u8 == kCheckReady;
}

AsyncStoreClient::Task<std::vector<Bytes>> AsyncStoreClient::MultiGet(
    std::vector<std::string> keys) {
  auto impl = impl_;
  auto scope = scope_;
  uint64_t count = keys.size();
  Reply reply = co_await impl->RoundTrip(
      *scope, StoreConnection::MakeRequest(Command::kMultiGet, std::move(keys)), count);
  co_return std::move(reply.values);
}

AsyncStoreClient::Task<void> AsyncStoreClient::MultiSet(std::vector<std::string> keys,
                                                        std::vector<Bytes> values) {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(
      *scope, StoreConnection::MakeRequest(Command::kMultiSet, std::move(keys), std::move(values)));
}

AsyncStoreClient::Task<bool> AsyncStoreClient::DeleteKey(std::string key) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, KeyRequest(Command::kDeleteKey, std::move(key)));
  co_return reply.number > 0;
}

AsyncStoreClient::Task<std::vector<std::string>> AsyncStoreClient::ListKeys() {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, StoreConnection::MakeRequest(Command::kListKeys));
  co_return std::move(reply.keys);
}

AsyncStoreClient::Task<Bytes> AsyncStoreClient::Claim(std::string key, Bytes value) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(
      *scope, KeyValueRequest(Command::kClaim, std::move(key), std::move(value)));
  co_return std::move(reply.values.at(0));
}

AsyncStoreClient::Task<void> AsyncStoreClient::Will(std::string key, Bytes value) {
  auto impl = impl_;
  const std::string what = "WILL '" + key + "'";
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(
      *scope, KeyValueRequest(Command::kWill, std::move(key), std::move(value)));
  if (reply.u8 != kAgentAccepted) {
    throw StoreError(what + " refused by the store at " + impl->peer + ": more than " +
                     std::to_string(OwnerTable::kMaxWills) + " wills on one connection");
  }
}

AsyncStoreClient::Task<void> AsyncStoreClient::CancelWills() {
  auto impl = impl_;
  auto scope = scope_;
  co_await impl->RoundTrip(*scope, StoreConnection::MakeRequest(Command::kCancelWills));
}

AsyncStoreClient::Task<int64_t> AsyncStoreClient::ClearWorkerKeys() {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply =
      co_await impl->RoundTrip(*scope, StoreConnection::MakeRequest(Command::kClearWorkerKeys));
  co_return reply.number;
}

AsyncStoreClient::Task<int64_t> AsyncStoreClient::Arm(const Arming& arming) {
  auto impl = impl_;
  auto scope = scope_;
  Reply reply = co_await impl->RoundTrip(*scope, ArmRequest(arming));
  co_return reply.number;
}

// WAIT's reply is deferred until the keys exist. On the deadline the timer sends CANCEL_WAIT;
// the server then answers WAIT_CANCELED, or STOP_WAITING followed by WAIT_CANCELED when the keys
// arrived in between. A store that answers neither within operation_timeout is given up on.
AsyncStoreClient::Task<bool> AsyncStoreClient::Wait(std::vector<std::string> keys,
                                                    std::chrono::milliseconds timeout) {
  auto impl = impl_;
  auto scope = scope_;
  Request request = StoreConnection::MakeRequest(Command::kWait, std::move(keys));
  if (impl->tagged) co_return co_await impl->TaggedWait(*scope, std::move(request), timeout);
  const std::string what = StoreConnection::Describe(request);
  StoreConnection::Turn turn(*impl, what.c_str());
  impl->RequireOpen(what);
  std::string bytes;
  EncodeRequest(impl->dialect(), request, &bytes);
  co_await impl->WriteAll(bytes, what);

  // The timer is armed only after the WAIT is written, so the CANCEL_WAIT write can never
  // overlap another write on the socket.
  auto cancel_sent = std::make_shared<bool>(false);
  if (timeout < StoreConnection::kForever) {
    uint64_t mine = ++impl->generation;
    impl->timed_out = false;
    impl->timer.expires_after(timeout);
    impl->timer.async_wait([impl, mine, cancel_sent](error_code ec) {
      if (ec || mine != impl->generation || !impl->open) return;
      *cancel_sent = true;
      auto cancel = std::make_shared<std::string>();
      EncodeRequest(impl->dialect(), StoreConnection::MakeRequest(Command::kCancelWait),
                    cancel.get());
      // The handler owns the buffer until the write ends. Its error is ignored: a broken
      // connection fails the pending read, which the deadline below bounds.
      asio::async_write(impl->socket, asio::buffer(*cancel), [impl, cancel](error_code, size_t) {});
      impl->ArmDeadline(impl->options.operation_timeout);
    });
  }
  Reply reply = co_await impl->ReadReply(ReplyShape::kU8, 0, what);
  bool keys_ready = reply.u8 == kStopWaiting;
  if (keys_ready && *cancel_sent) {
    reply = co_await impl->ReadReply(ReplyShape::kU8, 0, what);  // the WAIT_CANCELED
  }
  impl->Disarm();
  impl->ThrowIfEnded(*scope, what);
  co_return keys_ready;
}

}  // namespace cpplaunch
