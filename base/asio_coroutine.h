#pragma once
// Asio's coroutine support, included through this header only: Boost 1.74's awaitable.hpp uses
// std::exchange without including <utility>, and include sorting would otherwise put <utility>
// after it.

#include <utility>
// <utility> must stay above the Asio headers (see above).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
