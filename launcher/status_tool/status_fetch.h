#pragma once
// One GET of an agent's status endpoint: resolve, connect, send, read the whole answer, all
// before a deadline; one request per connection, as the endpoint serves them. The crawl's thin
// shell over Beast.
//
// Threads: the calling coroutine's executor. Errors: nothing throws; a failure comes back as
// one phrase ("Connection refused", "no answer within 2.0 s", "cannot resolve 'x': ...").

#include <chrono>
#include <string>

#include "base/asio_coroutine.h"
#include "launcher/status_tool/status_address.h"

namespace cpplaunch::status {

struct FetchResult {
  std::string error;  // "" when an HTTP answer came
  int status = 0;
  std::string body;
};

// `proof`: the X-Cpplaunch-Proof header's value, or "" to send none. Name resolution is not
// bounded by `deadline` (Asio's resolver cannot be cancelled); addresses usually are numeric.
boost::asio::awaitable<FetchResult> FetchStatus(StatusAddress address, std::string path,
                                                std::string proof,
                                                std::chrono::steady_clock::time_point deadline);

}  // namespace cpplaunch::status
