#include "launcher/multihost/hosted_store.h"

#include <utility>

namespace cpplaunch {

void HostedStore::Linger(std::chrono::milliseconds bound, std::function<void()> done) {
  linger_timer_.expires_after(bound);
  linger_timer_.async_wait([done](const boost::system::error_code&) { done(); });
  server_->WhenIdle(std::move(done));
}

void HostedStore::Stop() {
  linger_timer_.cancel();
  if (server_) server_->Stop();
}

}  // namespace cpplaunch
