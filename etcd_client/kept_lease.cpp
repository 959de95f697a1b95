#include "etcd_client/kept_lease.h"

#include <algorithm>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <optional>

#include "etcd_client/etcd_client.h"
#include "etcd_client/etcd_client_impl.h"

namespace cpplaunch::etcd {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

// After a failed renewal, the next try comes this soon (or at the usual ttl/3 if sooner).
constexpr auto kRetryPause = std::chrono::milliseconds(500);

}  // namespace

struct KeptLease::State : Stoppable {
  State(std::shared_ptr<Client::Impl> c, int64_t lease, std::chrono::seconds granted,
        std::function<void()> lost_callback)
      : client(std::move(c)),
        id(lease),
        ttl(granted),
        on_lost(std::move(lost_callback)),
        timer(client->executor) {}

  void Stop() override {
    stopped = true;
    timer.cancel();
  }

  void Lose() {
    if (stopped) return;
    stopped = true;
    lost = true;
    // The callback may destroy the KeptLease (and so this callback): run a copy.
    auto callback = std::move(on_lost);
    if (callback) callback();
  }

  // Waits `pause`; false when stopped meanwhile.
  Task<bool> Pause(Clock::duration pause) {
    timer.expires_after(pause);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    co_return !stopped;
  }

  // One renewal: the ttl etcd gives back (0: gone), or nullopt when no endpoint answered.
  Task<std::optional<std::chrono::seconds>> RenewOnce() {
    try {
      co_return co_await client->KeepAliveOnce(id);
    } catch (const EtcdError&) {
      co_return std::nullopt;
    }
  }

  // Holds the state, so that it outlives a KeptLease destroyed meanwhile.
  static Task<void> Run(std::shared_ptr<State> self) { co_await self->Renew(); }

  Task<void> Renew() {
    const Clock::duration period =
        std::max<Clock::duration>(ttl / 3, std::chrono::milliseconds(100));
    Clock::time_point renewed = Clock::now();
    Clock::duration pause = period;
    while (co_await Pause(pause)) {
      std::optional<std::chrono::seconds> left = co_await RenewOnce();
      if (stopped) co_return;
      if (left && left->count() > 0) {
        renewed = Clock::now();
        pause = period;
        continue;
      }
      // Gone, or a whole ttl without an answer: etcd has expired it (or is about to).
      if (left || Clock::now() - renewed >= ttl) co_return Lose();
      pause = std::min<Clock::duration>(period, kRetryPause);
    }
  }

  std::shared_ptr<Client::Impl> client;
  int64_t id;
  std::chrono::seconds ttl;
  std::function<void()> on_lost;
  asio::steady_timer timer;
  bool stopped = false;
  bool lost = false;
};

KeptLease::KeptLease(std::shared_ptr<State> state) : state_(std::move(state)) {}
KeptLease::~KeptLease() { state_->Stop(); }

int64_t KeptLease::id() const { return state_->id; }
std::chrono::seconds KeptLease::ttl() const { return state_->ttl; }
bool KeptLease::lost() const { return state_->lost; }

asio::awaitable<void> KeptLease::Revoke() {
  auto state = state_;
  state->Stop();
  co_await state->client->RevokeLease(state->id);
}

asio::awaitable<std::unique_ptr<KeptLease>> KeepLease(Client& client, std::chrono::seconds ttl,
                                                      std::function<void()> on_lost) {
  auto impl = client.impl();
  LeaseGrant grant = co_await impl->GrantLease(ttl);
  // etcd may have raised the ttl to its minimum: renew on what it granted.
  auto granted = grant.ttl.count() > 0 ? grant.ttl : ttl;
  auto state = std::make_shared<KeptLease::State>(impl, grant.id, granted, std::move(on_lost));
  impl->Register(state);
  asio::co_spawn(impl->executor, KeptLease::State::Run(state), asio::detached);
  co_return std::make_unique<KeptLease>(state);
}

}  // namespace cpplaunch::etcd
