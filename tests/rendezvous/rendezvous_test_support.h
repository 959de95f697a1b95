#pragma once
// Helpers for the rendezvous unit tests: run coroutines on one io_context with a bound, with a
// real StoreServer on 127.0.0.1 beside them.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/asio_coroutine.h"
#include "rendezvous/store/store_server.h"

namespace cpplaunch::testing {

// The outcome of one coroutine: its value, or the exception it threw.
template <class T>
struct Outcome {
  std::optional<T> value;
  std::exception_ptr error;
  bool done = false;

  T get() const {
    if (!done) throw std::runtime_error("coroutine did not finish");
    if (error) std::rethrow_exception(error);
    return *value;
  }
  std::string message() const {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

// Starts `task` on `io`; the returned outcome fills in when it finishes.
template <class T>
std::shared_ptr<Outcome<T>> Spawn(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  auto outcome = std::make_shared<Outcome<T>>();
  boost::asio::co_spawn(io, std::move(task), [outcome](std::exception_ptr error, T value) {
    outcome->done = true;
    outcome->error = error;
    if (!error) outcome->value = std::move(value);
  });
  return outcome;
}

inline std::shared_ptr<Outcome<bool>> Spawn(boost::asio::io_context& io,
                                            boost::asio::awaitable<void> task) {
  auto outcome = std::make_shared<Outcome<bool>>();
  boost::asio::co_spawn(io, std::move(task), [outcome](std::exception_ptr error) {
    outcome->done = true;
    outcome->error = error;
    if (!error) outcome->value = true;
  });
  return outcome;
}

// Starts the coroutine lambda `body` on `io`, keeping the lambda (and so its captures) alive
// until the coroutine finishes: a lambda coroutine reads its captures through the closure
// object, so a temporary closure would leave them dangling after the first suspension.
template <class Body>
auto SpawnBody(boost::asio::io_context& io, Body body) {
  auto holder = std::make_shared<Body>(std::move(body));
  using Task = decltype((*holder)());
  using T = typename Task::value_type;
  if constexpr (std::is_void_v<T>) {
    auto outcome = std::make_shared<Outcome<bool>>();
    boost::asio::co_spawn(io, (*holder)(), [outcome, holder](std::exception_ptr error) {
      outcome->done = true;
      outcome->error = error;
      if (!error) outcome->value = true;
    });
    return outcome;
  } else {
    auto outcome = std::make_shared<Outcome<T>>();
    boost::asio::co_spawn(io, (*holder)(), [outcome, holder](std::exception_ptr error, T value) {
      outcome->done = true;
      outcome->error = error;
      if (!error) outcome->value = std::move(value);
    });
    return outcome;
  }
}

// Runs `io` until `finished()` or `limit` passed.
template <class Pred>
void RunUntil(boost::asio::io_context& io, Pred finished, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  io.restart();
  while (!finished() && std::chrono::steady_clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(5));
    if (io.stopped()) io.restart();
  }
}

// True when every outcome is done.
template <class T>
bool AllDone(const std::vector<std::shared_ptr<Outcome<T>>>& outcomes) {
  for (const auto& outcome : outcomes) {
    if (!outcome->done) return false;
  }
  return true;
}

// Runs `io` until every outcome is done or `limit` passed.
template <class T>
void RunUntilAllDone(boost::asio::io_context& io,
                     const std::vector<std::shared_ptr<Outcome<T>>>& outcomes,
                     std::chrono::milliseconds limit) {
  RunUntil(
      io, [&] { return AllDone(outcomes); }, limit);
}

inline StoreServerOptions LoopbackServer() {
  StoreServerOptions options;
  options.bind_host = "127.0.0.1";
  options.port = 0;
  return options;
}

// A store on 127.0.0.1 (an ephemeral port) served by the loop its agents run on: the set-up of
// most rendezvous tests, as a Catch2 fixture (TEST_CASE_METHOD) or the base of one.
struct LoopbackStore {
  boost::asio::io_context io;
  StoreServer server{io, LoopbackServer()};
};

}  // namespace cpplaunch::testing
