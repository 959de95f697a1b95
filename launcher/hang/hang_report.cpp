#include "launcher/hang/hang_report.h"

#include <cstdio>

#include "launcher/hang/python_stack.h"

namespace cpplaunch {
namespace {

constexpr const char* kNoStack =
    "<no Python stack: not a Python worker, or its stderr was not seen>";
// A Python worker with faulthandler on dies of the SIGABRT after its dump, and so does any
// program that leaves the signal alone: one still alive (then stopped) ignored or blocked it.
constexpr const char* kNoAnswer =
    "it did not answer the stack request (SIGABRT ignored or blocked?)";

std::string Seconds(std::chrono::milliseconds timeout) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", static_cast<double>(timeout.count()) / 1000.0);
  return text;
}

// Where the rank was, or "" without a dump.
std::string Where(const std::vector<PythonThread>& threads) {
  return threads.empty() ? "" : WhereStuck(MainThread(threads));
}

}  // namespace

std::string HangNotice(std::chrono::milliseconds timeout) {
  return "no worker made progress for " + Seconds(timeout) +
         " (--hang-timeout: no output line, and not every worker used CPU); collecting each "
         "worker's Python stack (SIGABRT, PYTHONFAULTHANDLER=1), then stopping the job";
}

std::string RemoteHangNotice() {
  return "this host's workers made no progress either; collecting each worker's Python stack "
         "(SIGABRT, PYTHONFAULTHANDLER=1), then stopping";
}

std::string HangCause(std::chrono::milliseconds timeout) {
  return "no progress for " + Seconds(timeout) + " (--hang-timeout)";
}

std::string RemoteHangCause() {
  return "stalled here too when another host's --hang-timeout fired";
}

std::string HangReason(const std::string& cause, const std::string& stderr_text, bool answered) {
  std::string where = Where(ParseFaulthandlerDump(stderr_text));
  if (where.empty() && !answered) return cause + "; " + kNoAnswer;
  return cause +
         "; stopped with SIGABRT for its stack: " + (where.empty() ? std::string(kNoStack) : where);
}

std::string FormatHangReport(const std::vector<RankStderr>& ranks) {
  std::string summary = "cpplaunch: where each rank was when the job stopped making progress:\n";
  std::string stacks;
  for (const RankStderr& rank : ranks) {
    const std::vector<PythonThread> threads = ParseFaulthandlerDump(rank.text);
    const std::string where = Where(threads);
    const std::string missing =
        rank.answered ? kNoStack : "<no stack: " + std::string(kNoAnswer) + ">";
    summary += "cpplaunch:   rank " + std::to_string(rank.global_rank) + ": " +
               (where.empty() ? missing : where) + "\n";
    if (threads.empty()) continue;
    stacks += "cpplaunch: rank " + std::to_string(rank.global_rank) + " (local rank " +
              std::to_string(rank.local_rank) + "), most recent call first:\n" +
              FormatFrames(MainThread(threads), "    ");
  }
  return summary + stacks;
}

}  // namespace cpplaunch
