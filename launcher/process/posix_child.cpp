#include "launcher/process/posix_child.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "base/fd_io.h"

namespace cpplaunch::posix {

// base's WriteSome is safe here (write(2) and errno, nothing else). It gives up on a full
// non-blocking descriptor instead of waiting: a child that cannot report must still exit.
void WriteText(int fd, const char* text) {
  (void)WriteSome(fd, std::string_view(text, std::strlen(text)));
}

// Formats a non-negative number into `buf` (at least 12 bytes).
const char* FormatNumber(long value, char* buf) {
  char* end = buf + 11;
  *end = '\0';
  char* p = end;
  do {
    *--p = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && p > buf);
  return p;
}

void DefaultDispositions() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signo == SIGKILL || signo == SIGSTOP) continue;
    ::sigaction(signo, &action, nullptr);  // fails harmlessly for glibc's reserved signals
  }
}

void UnblockAll() {
  sigset_t empty;
  ::sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
}

// Closes every descriptor >= 3 except those in `keep` (sorted ascending, all >= 3).
void CloseAllExcept(const int* keep, int count) {
  unsigned int low = 3;
  for (int i = 0; i <= count; ++i) {
    unsigned int high = i < count ? static_cast<unsigned int>(keep[i]) : ~0U;
    if (high > low) {
      unsigned int last = i < count ? high - 1 : ~0U;
      if (::syscall(SYS_close_range, low, last, 0) != 0) {
        // Linux < 5.9: close one by one up to the descriptor limit.
        struct rlimit limit {};
        ::getrlimit(RLIMIT_NOFILE, &limit);
        rlim_t top = std::min<rlim_t>(limit.rlim_cur, last == ~0U ? limit.rlim_cur : last + 1);
        for (rlim_t fd = low; fd < top; ++fd) ::close(static_cast<int>(fd));
      }
    }
    if (i < count) low = static_cast<unsigned int>(keep[i]) + 1;
  }
}

}  // namespace cpplaunch::posix
