#include "launcher/process/bounded_child.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <exception>

#include "base/fd_io.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {
namespace {

constexpr std::size_t kMaxOutput = 4096;
// The status byte that ends a complete answer: a child that dies while writing, or before,
// leaves it out, so a partial text is never taken for a result.
constexpr char kComplete = '\n';

[[noreturn]] void ChildMain(const std::function<std::string()>& body, UniqueFd out) {
  int code = 0;
  try {
    std::string text = body();
    text.resize(std::min(text.size(), kMaxOutput - 1));
    text.push_back(kComplete);
    code = WriteAll(out.get(), text) == 0 ? 0 : 1;
  } catch (...) {
    code = 1;
  }
  posix::ExitHelper(code);
}

// Reads until end of file or `deadline`; true at end of file.
bool ReadUntilEof(int fd, std::chrono::steady_clock::time_point deadline, std::string* text) {
  char buffer[1024];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !WaitFd(fd, POLLIN, left)) return false;
    const IoResult read = ReadSome(fd, buffer, sizeof(buffer));
    if (read.status == IoResult::Status::kEof || read.status == IoResult::Status::kError) {
      return true;
    }
    text->append(buffer, read.bytes);
    if (text->size() > kMaxOutput) return true;  // not our child's answer; stop reading
  }
}

}  // namespace

BoundedChildResult RunInBoundedChild(const std::function<std::string()>& body,
                                     std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto [read_end, write_end] = posix::CloexecPipe();
  const pid_t pid = posix::ForkHelper();
  if (pid == 0) {
    read_end.reset();
    ChildMain(body, std::move(write_end));
  }
  write_end.reset();
  BoundedChildResult result;
  std::string text;
  const bool ended = ReadUntilEof(read_end.get(), deadline, &text);
  const auto left =
      std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 deadline - std::chrono::steady_clock::now()));
  // End of file is the child exiting (or closing the pipe and going on): give it what is left
  // of the deadline to be gone, then make sure.
  if (!ended || !posix::WaitChildExit(pid, -1, static_cast<int>(left.count()))) {
    posix::KillProcess(pid, SIGKILL);
    posix::WaitChildExit(pid, -1, 1000);
    result.status = BoundedChildResult::Status::kTimedOut;
    return result;
  }
  if (text.empty() || text.back() != kComplete) return result;  // kDied
  text.pop_back();
  result.status = BoundedChildResult::Status::kDone;
  result.output = std::move(text);
  return result;
}

}  // namespace cpplaunch
