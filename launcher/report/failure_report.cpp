#include "launcher/report/failure_report.h"

#include <algorithm>
#include <ctime>
#include <tuple>
#include <utility>
#include <vector>

#include "base/text.h"

namespace cpplaunch {
namespace {

using Clock = std::chrono::system_clock;

constexpr std::size_t kMaxRuleWidth = 60;
constexpr std::string_view kNotAvailable = "<N/A>";
constexpr std::string_view kTracebackHint =
    "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html";

// torchrun's datetime.fromtimestamp(ts).isoformat(sep="_") of a whole-second timestamp.
std::string LocalTime(Clock::time_point time) {
  const std::time_t seconds = Clock::to_time_t(std::chrono::floor<std::chrono::seconds>(time));
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof(text), "%Y-%m-%d_%H:%M:%S", &local);
  return std::string(text, n);
}

// Python's signal.Signals(n).name, or <N/A> for numbers without a name.
std::string SignalNameOrNA(int signo) {
  std::string name = SignalName(signo);
  return name.rfind("SIG", 0) == 0 ? name : std::string(kNotAvailable);
}

std::string MadeUpMessage(const FailureRecord& record) {
  if (!record.exit.signaled()) return std::string(kTracebackHint);
  return "Signal " + std::to_string(record.exit.signal()) + " (" +
         SignalNameOrNA(record.exit.signal()) + ") received by PID " + std::to_string(record.pid);
}

std::string TracebackText(const WorkerFailure& failure) {
  std::string text;
  if (failure.error)
    text = !failure.error->traceback.empty() ? failure.error->traceback : failure.error->message;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return MadeUpMessage(failure.record);
  std::string indented;
  indented.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  return indented;
}

std::string ExitCodeText(const FailureRecord& record) {
  std::string text =
      std::to_string(record.exit.torch_code()) + " (pid: " + std::to_string(record.pid) + ")";
  if (record.exit.signaled()) text += " " + SignalNameOrNA(record.exit.signal());
  if (record.killed_by_teardown) text += " [stopped by cpplaunch after the root cause]";
  return text;
}

std::string FormatFailure(std::size_t index, const WorkerFailure& failure) {
  const FailureRecord& r = failure.record;
  std::string text = "[" + std::to_string(index) + "]:\n";
  text += "  time      : " + LocalTime(FailureTime(failure)) + "\n";
  text += "  host      : " + r.host + "\n";
  text += "  rank      : " + std::to_string(r.global_rank) +
          " (local_rank: " + std::to_string(r.local_rank) + ")\n";
  text += "  exitcode  : " + ExitCodeText(r) + "\n";
  if (!r.reason.empty()) text += "  reason    : " + r.reason + "\n";
  text += "  error_file: " + (failure.error ? r.error_file : std::string(kNotAvailable)) + "\n";
  text += "  traceback : " + TracebackText(failure);
  return text;
}

// "rank 2 (pid 4243) SIGTERM": one teardown victim, for the shared line.
std::string VictimText(const FailureRecord& record) {
  std::string text =
      "rank " + std::to_string(record.global_rank) + " (pid " + std::to_string(record.pid) + ")";
  if (record.exit.signaled()) return text + " " + SignalNameOrNA(record.exit.signal());
  return text + " exitcode " + std::to_string(record.exit.torch_code());
}

// Widest line, counted in code points as Python's len() does (UTF-8 continuation bytes skipped).
std::size_t WidestLine(std::string_view text) {
  std::size_t widest = 0;
  std::size_t current = 0;
  for (char c : text) {
    if (c == '\n') {
      widest = std::max(widest, current);
      current = 0;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++current;
    }
  }
  return std::max(widest, current);
}

}  // namespace

std::vector<WorkerFailure> LoadWorkerFailures(std::vector<FailureRecord> records) {
  std::vector<WorkerFailure> failures;
  failures.reserve(records.size());
  for (FailureRecord& record : records) {
    std::optional<WorkerError> error = ReadWorkerError(record.error_file);
    failures.push_back({std::move(record), std::move(error)});
  }
  return failures;
}

Clock::time_point FailureTime(const WorkerFailure& failure) {
  if (failure.error && failure.error->timestamp) return *failure.error->timestamp;
  return failure.record.time;
}

std::size_t RootCauseIndex(const std::vector<WorkerFailure>& failures) {
  const bool any_own_failure = std::any_of(
      failures.begin(), failures.end(), [](const auto& f) { return !f.record.killed_by_teardown; });
  std::size_t best = failures.size();
  for (std::size_t i = 0; i < failures.size(); ++i) {
    // A worker the teardown stopped ended because of the root cause and cannot be it, even when
    // its time compares earlier (an error file's timestamp has whole seconds only).
    if (any_own_failure && failures[i].record.killed_by_teardown) continue;
    if (best == failures.size() ||
        std::make_tuple(FailureTime(failures[i]), failures[i].record.global_rank) <
            std::make_tuple(FailureTime(failures[best]), failures[best].record.global_rank)) {
      best = i;
    }
  }
  return best;
}

std::string FormatFailureSummary(std::string_view entrypoint,
                                 const std::vector<WorkerFailure>& failures) {
  std::vector<WorkerFailure> sorted = failures;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.record.global_rank < b.record.global_rank;
  });
  const std::size_t root = RootCauseIndex(sorted);
  const std::string title = std::string(entrypoint) + " FAILED";
  std::size_t width = WidestLine(title);
  std::string root_text;
  std::string others;
  std::vector<std::string> victims;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    // The workers the teardown stopped share one line: seven lines each said nothing new.
    if (i != root && sorted[i].record.killed_by_teardown) {
      victims.push_back(VictimText(sorted[i].record));
      continue;
    }
    std::string entry = FormatFailure(i, sorted[i]);
    width = std::max(width, WidestLine(entry));
    if (i == root) {
      root_text = std::move(entry);
    } else {
      others += (others.empty() ? "" : "\n") + entry;
    }
  }
  if (!victims.empty()) {
    others += (others.empty() ? "" : "\n") +
              std::string("[stopped by cpplaunch after the root cause]: ") + Join(victims, ", ");
  }
  if (others.empty()) others = "  <NO_OTHER_FAILURES>";
  width = std::min(width, kMaxRuleWidth);
  const std::string border(width, '=');
  const std::string section(width, '-');
  std::string text = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n";
  text += border + "\n" + title + "\n" + section + "\nFailures:\n" + others + "\n" + section +
          "\nRoot Cause (first observed failure):\n" + root_text + "\n" + border + "\n";
  return text;
}

std::string FailedLogLine(const FailureRecord& record, std::string_view binary) {
  return "failed (exitcode: " + std::to_string(record.exit.torch_code()) +
         ") local_rank: " + std::to_string(record.local_rank) +
         " (pid: " + std::to_string(record.pid) + ") of binary: " + std::string(binary);
}

nlohmann::json AgentErrorDocument(const WorkerFailure& root, std::string_view entrypoint,
                                  std::string_view summary) {
  const FailureRecord& r = root.record;
  const int code = r.exit.torch_code();
  if (root.error && root.error->data.is_object() && root.error->data.contains("message")) {
    nlohmann::json document = root.error->data;
    // As torchrun: the worker cannot know its exit code when a signal killed it.
    if (code != 0 && document["message"].is_object()) document["message"]["errorCode"] = code;
    return document;
  }
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(FailureTime(root).time_since_epoch());
  nlohmann::json message = {
      {"message", "ChildFailedError: " + std::string(entrypoint) + " FAILED (rank " +
                      std::to_string(r.global_rank) + ", local_rank " +
                      std::to_string(r.local_rank) + "): " + r.exit.describe()},
      {"extraInfo",
       {{"py_callstack", std::string(summary)}, {"timestamp", std::to_string(seconds.count())}}},
  };
  if (code != 0) message["errorCode"] = code;
  return {{"message", std::move(message)}};
}

}  // namespace cpplaunch
