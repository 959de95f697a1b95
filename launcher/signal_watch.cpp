#include "launcher/signal_watch.h"

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "launcher/posix_sys.h"
#include "launcher/worker_exit.h"

namespace cpplaunch {

SignalWatch::SignalWatch(boost::asio::io_context& io, const std::vector<int>& signals,
                         std::function<void(int)> on_signal)
    : set_(io), on_signal_(std::move(on_signal)) {
  for (int signo : signals) {
    set_.add(signo);
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
  set_.async_wait([this, alive = std::weak_ptr<char>(alive_)](
                      const boost::system::error_code& ec, int signo) {
    if (ec || alive.expired()) return;  // the watch was destroyed
    on_signal_(signo);
    Arm();
  });
}

int ParseSignal(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  long number = std::strtol(text.c_str(), &end, 10);
  if (*end == '\0') return number > 0 && number < NSIG ? static_cast<int>(number) : 0;
  std::string name = text;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.rfind("SIG", 0) != 0) name = "SIG" + name;
  for (int signo = 1; signo < NSIG; ++signo) {
    if (SignalName(signo) == name) return signo;
  }
  return 0;
}

}  // namespace cpplaunch
