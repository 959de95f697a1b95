#pragma once
// Store steps shared by the static and dynamic rendezvous and the job channel: connecting with
// progress lines, waiting for keys with progress lines, publishing the notice that ends a round,
// and releasing a new round once the previous round's worker keys are cleared. Coroutines on the
// caller's loop thread; each uses the client it is given (one operation at a time on it).

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "rendezvous/node_info.h"
#include "rendezvous/rendezvous.h"
#include "rendezvous/store/asio_coroutine.h"
#include "rendezvous/store/async_store_client.h"

namespace cpplaunch {

using ProgressSink = std::function<void(const std::string&)>;

// Connects `client` to host:port, retrying until `deadline`, calling `progress` every
// `interval` with the last reason. Throws RendezvousError naming the address, this host
// (`from`) and the reason.
boost::asio::awaitable<void> ConnectWithProgress(AsyncStoreClient& client, std::string host,
                                                 int port, std::string from,
                                                 AsyncStoreClient::Clock::time_point deadline,
                                                 std::chrono::milliseconds interval,
                                                 ProgressSink progress);

// Waits until every key exists (true) or `deadline` (false). Every `interval` without success
// calls on_tick(), which may report progress; it is a coroutine so it can query the store.
boost::asio::awaitable<bool> WaitForKeys(AsyncStoreClient& client, std::vector<std::string> keys,
                                         AsyncStoreClient::Clock::time_point deadline,
                                         std::chrono::milliseconds interval,
                                         std::function<boost::asio::awaitable<void>()> on_tick);

// Writes `notice` as the end of `round` unless a notice is already there; returns the notice
// that is stored now (ours, or the earlier one: the root cause).
boost::asio::awaitable<RoundEnd> PublishRoundEnd(AsyncStoreClient& client,
                                                 const std::string& run_id, int64_t round,
                                                 RoundEnd notice);

// Deletes every key that is not an agent key (the workers' keys of earlier rounds), then sets
// the round's "go" key. Called by group rank 0 of a round > 0 (through ReleaseRound).
boost::asio::awaitable<void> ClearWorkerKeys(AsyncStoreClient& client, const std::string& run_id,
                                             int64_t round);

// The last step of a round before workers start. Round 0 has nothing to clean: returns at once.
// In a later round, group rank 0 runs ClearWorkerKeys and every other rank waits for the round's
// "go" key, so no host starts workers while the previous attempt's worker keys remain. Throws
// RendezvousError(`timeout_message`) when the go key is not there by `deadline`.
boost::asio::awaitable<void> ReleaseRound(AsyncStoreClient& client, const std::string& run_id,
                                          int64_t round, int group_rank,
                                          AsyncStoreClient::Clock::time_point deadline,
                                          std::chrono::milliseconds interval,
                                          std::string timeout_message);

std::string GoKey(const std::string& run_id, int64_t round);
std::string EndKey(const std::string& run_id, int64_t round);

// "12 s" / "1.5 s" for progress lines.
std::string FormatSeconds(std::chrono::steady_clock::duration duration);

}  // namespace cpplaunch
