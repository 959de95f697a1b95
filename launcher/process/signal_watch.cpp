#include "launcher/process/signal_watch.h"

#include "launcher/process/posix_sys.h"

namespace cpplaunch {

SignalWatch::SignalWatch(boost::asio::io_context& io, const std::vector<int>& signals,
                         std::function<void(int)> on_signal)
    : set_(io), on_signal_(std::move(on_signal)) {
  for (int signo : signals) {
    set_.add(signo);
    // After add(): asio installs its handler without SA_RESTART, and the flag is added to the
    // handler that is in place. Without it a signal makes blocking calls elsewhere in the
    // agent (a console write, a file read) fail with EINTR.
    posix::AddRestartFlag(signo);
  }
  Arm();
}

SignalWatch::~SignalWatch() {
  // Cancelled waits complete later with operation_aborted and touch nothing of ours; removing
  // the signals restores their default dispositions.
  boost::system::error_code ignored;
  set_.clear(ignored);
}

void SignalWatch::Arm() {
  set_.async_wait(
      [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec, int signo) {
        if (ec || alive.expired()) return;  // the watch was destroyed
        on_signal_(signo);
        Arm();
      });
}

}  // namespace cpplaunch
