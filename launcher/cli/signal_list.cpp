#include "launcher/cli/signal_list.h"

#include <algorithm>
#include <array>
#include <csignal>

#include "base/text.h"

namespace cpplaunch {
namespace {

struct NamedSignal {
  std::string_view name;
  int number;
};

// The signal names Python's signal module defines on Linux (SIGRTMIN/SIGRTMAX aside).
constexpr std::array<NamedSignal, 31> kSignals = {{
    {"SIGHUP", SIGHUP},       {"SIGINT", SIGINT},   {"SIGQUIT", SIGQUIT},     {"SIGILL", SIGILL},
    {"SIGTRAP", SIGTRAP},     {"SIGABRT", SIGABRT}, {"SIGIOT", SIGIOT},       {"SIGBUS", SIGBUS},
    {"SIGFPE", SIGFPE},       {"SIGKILL", SIGKILL}, {"SIGUSR1", SIGUSR1},     {"SIGSEGV", SIGSEGV},
    {"SIGUSR2", SIGUSR2},     {"SIGPIPE", SIGPIPE}, {"SIGALRM", SIGALRM},     {"SIGTERM", SIGTERM},
    {"SIGSTKFLT", SIGSTKFLT}, {"SIGCHLD", SIGCHLD}, {"SIGCONT", SIGCONT},     {"SIGSTOP", SIGSTOP},
    {"SIGTSTP", SIGTSTP},     {"SIGTTIN", SIGTTIN}, {"SIGTTOU", SIGTTOU},     {"SIGURG", SIGURG},
    {"SIGXCPU", SIGXCPU},     {"SIGXFSZ", SIGXFSZ}, {"SIGVTALRM", SIGVTALRM}, {"SIGPROF", SIGPROF},
    {"SIGWINCH", SIGWINCH},   {"SIGIO", SIGIO},     {"SIGPWR", SIGPWR},
}};

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

int Lookup(std::string_view name) {
  // Not in the constexpr table: glibc's SIGRTMIN and SIGRTMAX are function calls.
  if (name == "SIGRTMIN") return SIGRTMIN;
  if (name == "SIGRTMAX") return SIGRTMAX;
  if (name == "SIGPOLL") return SIGPOLL;
  if (name == "SIGSYS") return SIGSYS;
  for (const NamedSignal& s : kSignals) {
    if (s.name == name) return s.number;
  }
  return 0;
}

// Why a known signal cannot be handled by the agent, or "" when it can.
std::string_view Unhandleable(int signo) {
  if (signo == SIGKILL || signo == SIGSTOP) return "it cannot be caught";
  if (signo == SIGCHLD) return "the agent needs it to see its workers exit";
  return "";
}

void Add(std::string_view name, SignalList& list) {
  const int signo = Lookup(name);
  if (signo == 0) {
    list.warnings.push_back("Failed to register signal handler for '" + std::string(name) +
                            "': not a signal name; skipped");
    return;
  }
  if (std::string_view why = Unhandleable(signo); !why.empty()) {
    list.warnings.push_back("Not handling " + std::string(name) + ": " + std::string(why));
    return;
  }
  if (std::find(list.signals.begin(), list.signals.end(), signo) == list.signals.end()) {
    list.signals.push_back(signo);
  }
}

}  // namespace

std::optional<std::vector<int>> ParseForwardSignals(std::string_view text, std::string* error) {
  std::vector<int> signals;
  if (Strip(text).empty()) return signals;
  for (std::string_view piece : Split(text, ',')) {
    const std::string_view name = Strip(piece);
    const int signo = Lookup(name);
    if (signo == 0) {
      *error = "--forward-signals: " + Quote(name) +
               " is not a signal name (use the SIG names, comma-separated: SIGUSR1,SIGUSR2)";
      return std::nullopt;
    }
    if (std::string_view why = Unhandleable(signo); !why.empty()) {
      *error = "--forward-signals: cannot forward " + std::string(name) + ": " + std::string(why);
      return std::nullopt;
    }
    if (std::find(signals.begin(), signals.end(), signo) == signals.end()) {
      signals.push_back(signo);
    }
  }
  return signals;
}

std::string SignalModuleName(int signo) {
  if (signo == SIGRTMIN) return "SIGRTMIN";
  if (signo == SIGRTMAX) return "SIGRTMAX";
  for (const NamedSignal& s : kSignals) {
    if (s.number == signo) return std::string(s.name);
  }
  return "signal " + std::to_string(signo);
}

SignalList ParseSignalList(std::string_view text) {
  SignalList list;
  // Every piece, empty ones too: an empty name is warned about like any unknown one.
  for (std::string_view name : Split(text, ',')) Add(Strip(name), list);
  return list;
}

}  // namespace cpplaunch
