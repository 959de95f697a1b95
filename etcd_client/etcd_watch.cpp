#include "etcd_client/etcd_watch.h"

#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/text.h"
#include "etcd_client/etcd_client.h"
#include "etcd_client/etcd_client_impl.h"
#include "etcd_client/etcd_json.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

}  // namespace

struct Watch::State : Stoppable {
  State(std::shared_ptr<Client::Impl> c, std::string k, std::string end, int64_t start,
        std::function<void(const std::vector<WatchEvent>&)> events,
        std::function<void(const std::string&)> ended)
      : client(std::move(c)),
        key(std::move(k)),
        range_end(std::move(end)),
        next_revision(start),
        on_events(std::move(events)),
        on_end(std::move(ended)),
        timer(client->executor) {}

  void Stop() override {
    stopped = true;
    timer.cancel();
    if (connection) connection->Close();
    if (channel) channel->CancelStream(stream);
  }

  void End(std::string why) {
    if (stopped) return;
    Stop();
    end_reason = std::move(why);
    auto callback = std::move(on_end);  // it may destroy the Watch
    if (callback) callback(end_reason);
  }

  // Holds the state, so that it outlives a Watch destroyed meanwhile.
  static Task<void> Run(std::shared_ptr<State> self) {
    std::string why;
    while (!self->stopped) {
      why = co_await self->Open();
      if (!why.empty()) break;
      why = co_await self->Stream();
      // The member went away mid-stream: the next one, from where this one stopped.
      if (!why.empty() && !self->stopped) self->index = (self->index + 1) % self->Count();
      why.clear();
    }
    if (!why.empty()) self->End(why);
  }

  size_t Count() const { return client->settings.endpoints.size(); }

  // Opens the watch on the first endpoint that accepts it, from `index` on, within the
  // client's request timeout. Returns "" or why none did (the end of the watch).
  Task<std::string> Open() {
    const Clock::time_point started = Clock::now();
    const Clock::time_point deadline = started + client->settings.request_timeout;
    std::vector<std::string> failures(Count());
    Client::Impl::Pacing pacing(*client);
    for (size_t attempt = 1; !stopped; ++attempt) {
      const Clock::time_point attempt_by = pacing.AttemptBy(deadline);
      std::string why = co_await TryOpen(attempt_by);
      if (stopped) co_return "";
      if (why.empty()) co_return "";
      pacing.Failed(attempt_by);
      Clock::time_point now = Clock::now();
      // An attempt cut short by the deadline says less than an earlier one.
      if (failures[index].empty() || now < deadline) failures[index] = why;
      index = (index + 1) % Count();
      if (now >= deadline) break;
      if (attempt % Count() == 0) {
        timer.expires_after(std::min<Clock::duration>(pacing.RoundPause(), deadline - now));
        boost::system::error_code ignored;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      }
    }
    if (stopped) co_return "";
    std::string message = "the etcd watch of " + QuoteKey(key) +
                          " lost every endpoint (tried for " +
                          FormatTenths(Clock::now() - started) + "):";
    const char* separator = " ";
    for (size_t i = 0; i < failures.size(); ++i) {
      if (failures[i].empty()) continue;
      message += separator + client->settings.endpoints[i].ToString() + ": " + failures[i];
      separator = "; ";
    }
    co_return message;
  }

  Task<std::string> TryOpen(Clock::time_point deadline) {
    if (client->grpc) co_return co_await TryOpenGrpc(deadline);
    connection = client->NewConnection(index);
    auto connect_by = std::min(deadline, Clock::now() + client->settings.connect_timeout);
    std::string why = co_await connection->Connect(connect_by);
    if (!why.empty()) co_return why;
    HttpConnection::Answer answer = co_await connection->OpenStream(
        client->wire->path(Rpc::kWatch),
        client->wire->watch_create_request(key, range_end, next_revision), deadline);
    if (!answer.error.empty()) co_return answer.error;
    if (answer.status != 200) {
      co_return "HTTP " + std::to_string(answer.status) + ": " + json::ErrorMessage(answer.body);
    }
    co_return "";
  }

  // The watch as a stream of the member's gRPC connection, which the client's requests share.
  Task<std::string> TryOpenGrpc(Clock::time_point deadline) {
    std::string why;
    channel = co_await client->GrpcChannel(index, deadline, &why);
    if (!channel) co_return why;
    GrpcConnection::Answer answer = co_await channel->OpenStream(
        client->wire->path(Rpc::kWatch),
        client->wire->watch_create_request(key, range_end, next_revision), deadline);
    if (!answer.error.empty()) co_return answer.error;
    if (answer.stream == 0) {
      co_return "gRPC " + GrpcStatusName(answer.status) + ": " + answer.message;
    }
    stream = answer.stream;
    co_return "";
  }

  // Reads the stream until it breaks: "" when the watch ended here (or was stopped), else why
  // the stream broke (move to another member).
  Task<std::string> Stream() {
    if (client->grpc) co_return co_await StreamGrpc();
    std::string pending;
    for (;;) {
      std::string why = co_await connection->ReadStream(&pending);
      if (stopped) co_return "";
      if (!why.empty()) co_return why;
      size_t newline;
      while ((newline = pending.find('\n')) != std::string::npos) {
        std::string line = pending.substr(0, newline);
        pending.erase(0, newline + 1);
        if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
        if (!Deliver(line)) co_return "";
      }
    }
  }

  Task<std::string> StreamGrpc() {
    // Open() also returns "" when the watch was stopped meanwhile, perhaps without a channel.
    if (stopped || !channel) co_return "";
    for (;;) {
      std::vector<std::string> messages;
      std::string why = co_await channel->ReadStream(stream, &messages);
      if (stopped) co_return "";
      for (const std::string& message : messages) {
        if (!Deliver(message)) co_return "";
      }
      if (!why.empty()) {
        channel.reset();
        co_return why;
      }
    }
  }

  // One message of the stream; false when the watch is over.
  bool Deliver(const std::string& line) {
    WatchMessage message;
    try {
      message = client->wire->parse_watch_message(line);
    } catch (const EtcdError& error) {
      End("the etcd watch of " + QuoteKey(key) + " failed: " + error.what());
      return false;
    }
    if (message.canceled) {
      compact_revision = message.compact_revision;
      End(CancelReason(message));
      return false;
    }
    if (message.events.empty()) {
      // Created (from now on) or a progress notice: every change up to `revision` was sent.
      if (message.created ? next_revision == 0 : message.revision >= next_revision) {
        next_revision = message.revision + 1;
      }
      return true;
    }
    next_revision = message.events.back().kv.mod_revision + 1;
    on_events(message.events);
    return !stopped;
  }

  std::string CancelReason(const WatchMessage& message) const {
    std::string why = "the etcd watch of " + QuoteKey(key);
    if (message.compact_revision > 0) {
      return why + " was cancelled: revision " + std::to_string(next_revision) +
             " was compacted (compact_revision " + std::to_string(message.compact_revision) +
             "); read again, then watch again";
    }
    return why + " was cancelled by etcd: " +
           (message.cancel_reason.empty() ? "no reason given" : message.cancel_reason);
  }

  std::shared_ptr<Client::Impl> client;
  std::string key;
  std::string range_end;
  int64_t next_revision;
  std::function<void(const std::vector<WatchEvent>&)> on_events;
  std::function<void(const std::string&)> on_end;
  asio::steady_timer timer;
  std::shared_ptr<HttpConnection> connection;  // the gateway's
  std::shared_ptr<GrpcConnection> channel;     // gRPC's, shared with the client's requests
  int32_t stream = 0;                          // the watch's on `channel`
  size_t index = 0;                            // the endpoint streaming the watch
  bool stopped = false;
  std::string end_reason;
  int64_t compact_revision = 0;
};

Watch::Watch(std::shared_ptr<State> state) : state_(std::move(state)) {}
Watch::~Watch() { Cancel(); }

void Watch::Cancel() { state_->Stop(); }
const std::string& Watch::end_reason() const { return state_->end_reason; }
int64_t Watch::compact_revision() const { return state_->compact_revision; }
int64_t Watch::next_revision() const { return state_->next_revision; }

std::unique_ptr<Watch> StartWatch(Client& client, std::string key, std::string range_end,
                                  int64_t start_revision,
                                  std::function<void(const std::vector<WatchEvent>&)> on_events,
                                  std::function<void(const std::string& why)> on_end) {
  auto impl = client.impl();
  auto state =
      std::make_shared<Watch::State>(impl, std::move(key), std::move(range_end), start_revision,
                                     std::move(on_events), std::move(on_end));
  state->index = impl->preferred;
  if (impl->closed) {
    state->stopped = true;
    state->end_reason = "the etcd client was closed";
  } else {
    impl->Register(state);
    asio::co_spawn(impl->executor, Watch::State::Run(state), asio::detached);
  }
  return std::make_unique<Watch>(state);
}

}  // namespace cpplaunch::etcd
