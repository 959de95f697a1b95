#include "launcher/report/agent_console.h"

#include <utility>

namespace cpplaunch {
namespace {

LogLevelSetting LevelOf(const EnvMap& env) {
  const auto value = Lookup(env, "LOGLEVEL");
  return ReadLogLevel(value ? std::optional<std::string_view>(*value) : std::nullopt);
}

}  // namespace

AgentConsole::AgentConsole(boost::asio::io_context& io, int stdout_fd, int stderr_fd,
                           const EnvMap& env)
    : out_(io, stdout_fd),
      separate_err_(ConsoleWriter::SameFile(stdout_fd, stderr_fd)
                        ? nullptr
                        : std::make_unique<ConsoleWriter>(io, stderr_fd)),
      err_(separate_err_ ? *separate_err_ : out_),
      log_(LevelOf(env), [this](std::string_view line) {
        err_.Write("cpplaunch: " + std::string(line) + "\n");
      }) {}

void AgentConsole::Flush(std::chrono::steady_clock::time_point deadline,
                         std::function<void()> flushed) {
  out_.Flush(deadline, [] {});
  err_.Flush(deadline, std::move(flushed));
}

}  // namespace cpplaunch
