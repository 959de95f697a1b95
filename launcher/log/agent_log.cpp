// spdlog and fmt are used header-only (CMakeLists.txt: FMT_HEADER_ONLY, no SPDLOG_COMPILED_LIB),
// and SPDLOG_PREVENT_CHILD_FD makes the file sink open agent.log with O_CLOEXEC.
#include "launcher/log/agent_log.h"

#include <spdlog/details/null_mutex.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/ringbuffer_sink.h>

#include <algorithm>
#include <utility>

namespace cpplaunch {
namespace {

// Local time with its offset from UTC, so that post-mortems can line up hosts' logs.
constexpr const char* kFilePattern = "%Y-%m-%d %H:%M:%S.%e %z %l: %v";

spdlog::level::level_enum SpdLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kCritical:
      return spdlog::level::critical;
  }
  return spdlog::level::warn;
}

// The console's sink: the bare message to the caller's writer.
class ConsoleSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  explicit ConsoleSink(AgentLog::Console console) : console_(std::move(console)) {}

 private:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    console_(std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

  AgentLog::Console console_;
};

}  // namespace

struct AgentLog::Sinks {
  std::shared_ptr<ConsoleSink> console;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_st> backlog;  // until OpenFile; then null
  spdlog::logger logger{"cpplaunch"};
  spdlog::logger kept{"cpplaunch-kept"};  // agent.log (or its backlog) only
};

AgentLog::AgentLog(const LogLevelSetting& setting, Console console)
    : level_(setting.level), sinks_(std::make_unique<Sinks>()) {
  const LogLevel level = setting.level;
  // Said lines are logged at WARNING and reach the console even at LOGLEVEL=ERROR: they name
  // what went wrong, and hiding them would leave a failed job unexplained.
  const auto console_level = std::min(SpdLevel(level), spdlog::level::warn);
  // The file keeps INFO at least: a post-mortem needs the decisions the console may hide.
  const auto file_level = std::min(SpdLevel(level), spdlog::level::info);
  sinks_->console = std::make_shared<ConsoleSink>(std::move(console));
  sinks_->console->set_level(console_level);
  sinks_->console->set_pattern("%v");
  sinks_->backlog = std::make_shared<spdlog::sinks::ringbuffer_sink_st>(kBacklog);
  sinks_->backlog->set_level(file_level);
  sinks_->logger.sinks() = {sinks_->console, sinks_->backlog};
  sinks_->logger.set_level(std::min(console_level, file_level));
  sinks_->logger.flush_on(spdlog::level::trace);
  sinks_->kept.sinks() = {sinks_->backlog};
  sinks_->kept.flush_on(spdlog::level::trace);
  if (!setting.warning.empty()) Say(setting.warning);
}

AgentLog::~AgentLog() = default;

void AgentLog::Say(std::string_view line) {
  const auto level = line.starts_with("error: ") ? spdlog::level::err : spdlog::level::warn;
  sinks_->logger.log(level, spdlog::string_view_t(line.data(), line.size()));
}

void AgentLog::Info(std::string_view line) {
  sinks_->logger.log(spdlog::level::info, spdlog::string_view_t(line.data(), line.size()));
}

void AgentLog::Debug(std::string_view line) {
  if (!debug()) return;
  sinks_->logger.log(spdlog::level::debug, spdlog::string_view_t(line.data(), line.size()));
}

void AgentLog::Keep(std::string_view block) {
  while (!block.empty()) {
    const size_t end = block.find('\n');
    const std::string_view line = block.substr(0, end);
    if (!line.empty()) {
      sinks_->kept.log(spdlog::level::err, spdlog::string_view_t(line.data(), line.size()));
    }
    if (end == std::string_view::npos) break;
    block.remove_prefix(end + 1);
  }
}

std::string AgentLog::OpenFile(const std::filesystem::path& path) {
  if (!sinks_->backlog) return "the agent's log file is already open";
  std::shared_ptr<spdlog::sinks::basic_file_sink_st> file;
  try {
    file = std::make_shared<spdlog::sinks::basic_file_sink_st>(path.string(), /*truncate=*/true);
  } catch (const spdlog::spdlog_ex& e) {
    return "cannot write the agent's log " + path.string() + ": " + e.what() +
           "; its lines stay on the console only";
  }
  file->set_level(sinks_->backlog->level());
  file->set_pattern(kFilePattern);
  for (const auto& line : sinks_->backlog->last_raw()) file->log(line);
  file->flush();
  sinks_->logger.sinks() = {sinks_->console, file};
  sinks_->kept.sinks() = {file};
  sinks_->backlog.reset();
  return "";
}

}  // namespace cpplaunch
