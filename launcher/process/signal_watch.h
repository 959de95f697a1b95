#pragma once
// SignalWatch: delivers the agent's handled signals (torchrun's TERM INT HUP QUIT, plus e.g.
// USR1 USR2) to a callback on the io_context thread, until destroyed.
//
// Built on boost::asio::signal_set, so the handlers only notify the loop. While the watch
// exists, the signals' default actions are replaced (the agent does not die of them); the
// destructor restores the default dispositions. Handlers are installed with SA_RESTART so a
// signal never makes an unrelated blocking call fail with EINTR.
// Threads: construct, destroy and receive callbacks on the loop thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <memory>
#include <vector>

namespace cpplaunch {

class SignalWatch {
 public:
  SignalWatch(boost::asio::io_context& io, const std::vector<int>& signals,
              std::function<void(int)> on_signal);
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

 private:
  void Arm();

  boost::asio::signal_set set_;
  std::function<void(int)> on_signal_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();  // expires first on destruction
};

}  // namespace cpplaunch
