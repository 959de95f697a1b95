// cpplaunch-status: one table of every host and rank of a running job, from the agents'
// status endpoints (cpplaunch --status-port). A program of its own, not `cpplaunch status`:
// torchrun reads its first positional argument as the training script, and a script named
// `status` must keep working. Usage in status_args.h; exit status: 0 when an agent answered
// (or --watch ended by SIGINT/SIGTERM), 1 when none could be reached, 2 for bad usage.

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/crypto/secret_file.h"
#include "base/exit_code.h"
#include "base/version.h"
#include "launcher/status_tool/job_crawl.h"
#include "launcher/status_tool/status_args.h"
#include "launcher/status_tool/status_document.h"
#include "launcher/status_tool/status_table.h"

namespace {

namespace asio = boost::asio;
namespace status = cpplaunch::status;
using cpplaunch::ExitCode;
using cpplaunch::ProcessExitCode;

constexpr std::string_view kProgram = "cpplaunch-status";
// Clear the screen and go home: each refresh replaces the last one on a terminal.
constexpr std::string_view kClearScreen = "\x1b[H\x1b[2J";

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// The one line for a crawl that reached no agent: the first address's failure, and the
// likely cause.
std::string NoAgentLine(const std::vector<status::HostProbe>& probes) {
  const status::HostProbe& first = probes.front();
  std::string more =
      probes.size() > 1 ? " (and " + std::to_string(probes.size() - 1) + " more addresses)" : "";
  if (first.connected) {
    return "no status from " + first.target.address + ": " + first.error + more +
           "; is that the agent's --status-port?";
  }
  return "cannot reach " + first.target.address + ": " + first.error + more +
         "; is the agent running with --status-port?";
}

bool AnyAnswer(const std::vector<status::HostProbe>& probes) {
  for (const status::HostProbe& probe : probes) {
    if (probe.answer) return true;
  }
  return false;
}

struct Session {
  status::StatusArgs args;
  status::CrawlSettings crawl;
  bool terminal = false;  // stdout is a terminal: a refresh redraws in place
  int exit_code = ProcessExitCode(ExitCode::kSuccess);
};

std::string Render(const Session& session, const status::CrawlResult& result) {
  status::RowSettings settings{session.args.silent_after_seconds, UnixNow(),
                               result.hosts_not_asked};
  status::StatusRows rows = status::BuildStatusRows(result.probes, settings);
  if (session.args.json) {
    // Watching: one document per line (JSON Lines), which a script reads as they come.
    int indent = session.args.watch_seconds ? -1 : 2;
    return status::StatusDocument(result.probes, rows.summary).dump(indent) + "\n";
  }
  return status::RenderStatusTable(rows, session.args.silent_after_seconds);
}

// Crawl, print, and with --watch wait and do it again; ends the loop when done.
asio::awaitable<void> Show(Session& session) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer pause(executor);
  for (bool first = true;; first = false) {
    status::CrawlResult result = co_await status::CrawlJob(session.args.addresses, session.crawl);
    if (first && !AnyAnswer(result.probes)) {
      std::cerr << kProgram << ": " << NoAgentLine(result.probes) << "\n";
      session.exit_code = ProcessExitCode(ExitCode::kFailure);
      co_return;
    }
    bool redraw = session.args.watch_seconds && session.terminal && !session.args.json;
    if (redraw) std::cout << kClearScreen;
    // One table after another off a terminal: a blank line between them.
    if (!first && !redraw && !session.args.json) std::cout << "\n";
    std::cout << Render(session, result) << std::flush;
    if (!session.args.watch_seconds) co_return;
    pause.expires_after(Millis(*session.args.watch_seconds));
    boost::system::error_code ignored;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
}

int Run(int argc, char** argv) {
  std::vector<std::string_view> words(argv + 1, argv + argc);
  status::ParsedStatusArgs parsed = status::ParseStatusArgs(words);
  if (!parsed.args) {
    std::cerr << kProgram << ": " << parsed.error << "\n";
    return ProcessExitCode(ExitCode::kUsage);
  }
  Session session{std::move(*parsed.args), {}, isatty(STDOUT_FILENO) == 1};
  if (session.args.help || session.args.version) {
    std::cout << (session.args.help ? status::StatusUsage() : cpplaunch::VersionLine(kProgram));
    return ProcessExitCode(ExitCode::kSuccess);
  }
  if (!session.args.secret_file.empty()) {
    cpplaunch::SecretFile file = cpplaunch::ReadSecretFile(session.args.secret_file);
    if (!file.secret) {
      std::cerr << kProgram << ": --secret-file: " << file.error << "\n";
      return ProcessExitCode(ExitCode::kUsage);
    }
    session.crawl.secret = std::move(*file.secret);
  }
  session.crawl.timeout = Millis(session.args.timeout_seconds);
  // A reader that goes away (`| head`) ends the program by EPIPE, not by SIGPIPE's default.
  std::signal(SIGPIPE, SIG_IGN);
  asio::io_context io(1);
  // Watching ends with SIGINT or SIGTERM, and that is a normal end: exit 0.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  std::exception_ptr failed;
  asio::co_spawn(io, Show(session), [&](std::exception_ptr error) {
    failed = std::move(error);
    signals.cancel();
  });
  io.run();
  if (failed) std::rethrow_exception(failed);
  return session.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& error) {
    // Whatever escapes (out of memory, a failed write to stdout): one line, never an abort.
    std::cerr << kProgram << ": " << error.what() << "\n";
    return ProcessExitCode(ExitCode::kFailure);
  }
}
