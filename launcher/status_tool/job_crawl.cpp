#include "launcher/status_tool/job_crawl.h"

#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <memory>

#include "base/crypto/status_proof.h"
#include "launcher/status_tool/status_fetch.h"

namespace cpplaunch::status {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kStatusPath = "/status";

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The crawl's state, shared by the requests in flight; each holds it alive until it finishes.
struct Crawl : std::enable_shared_from_this<Crawl> {
  Crawl(const asio::any_io_executor& executor, CrawlSettings crawl_settings)
      : settings(std::move(crawl_settings)),
        frontier(settings.max_hosts, settings.max_in_flight),
        done(executor, Clock::time_point::max()) {}

  CrawlSettings settings;
  CrawlFrontier frontier;
  std::vector<HostProbe> probes;
  // Waits "forever"; cancelled when the crawl is complete, to wake CrawlJob.
  asio::steady_timer done;

  // Starts every request the frontier allows now; wakes CrawlJob once nothing is left.
  void Pump() {
    while (std::optional<CrawlTarget> target = frontier.Next()) {
      asio::co_spawn(done.get_executor(), Ask(shared_from_this(), std::move(*target)),
                     asio::detached);
    }
    if (frontier.complete()) done.cancel();
  }

  static asio::awaitable<void> Ask(std::shared_ptr<Crawl> self, CrawlTarget target) {
    FetchResult result;
    if (std::optional<StatusAddress> address = ParseStatusAddress(target.address)) {
      // The proof's time is taken at sending, so a crawl slower than the agent's window still
      // proves itself on every request.
      std::string proof = self->settings.secret.empty()
                              ? std::string()
                              : StatusProof(self->settings.secret, UnixNow(), kStatusPath);
      result = co_await FetchStatus(std::move(*address), std::string(kStatusPath), std::move(proof),
                                    Clock::now() + self->settings.timeout);
    } else {
      result.error = "not a status address HOST:PORT";
    }
    HostProbe probe = ReadProbe(std::move(target), result.error, result.status, result.body);
    if (probe.answer) LearnHosts(*probe.answer, &self->frontier);
    self->probes.push_back(std::move(probe));
    self->frontier.Finished();
    self->Pump();
  }
};

}  // namespace

asio::awaitable<CrawlResult> CrawlJob(std::vector<std::string> seeds, CrawlSettings settings) {
  auto crawl = std::make_shared<Crawl>(co_await asio::this_coro::executor, std::move(settings));
  for (std::string& seed : seeds) crawl->frontier.Add(CrawlTarget{std::move(seed), "", {}});
  crawl->Pump();
  while (!crawl->frontier.complete()) {
    boost::system::error_code ignored;  // operation_aborted: Pump saw the crawl complete
    co_await crawl->done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  co_return CrawlResult{std::move(crawl->probes), crawl->frontier.dropped()};
}

}  // namespace cpplaunch::status
