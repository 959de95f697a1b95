// Runs one launcher invocation for the process benchmarks and measures it from the outside.
//
//   proc_run [--timeout-ms T] [--grace-ms G] [--stdout FILE] [--stderr FILE] -- COMMAND ARGS...
//
// proc_run makes itself a child subreaper, reads CLOCK_MONOTONIC, forks and execs COMMAND (in
// its own process group), and blocks in wait4() until COMMAND exits. Any process of the job that
// outlives COMMAND is re-parented to proc_run, which then counts the ones still running, waits up
// to G ms (default 10000) for them to go and SIGKILLs whatever is left. COMMAND itself is
// SIGKILLed with its process group after T ms (default 120000).
//
// Prints one JSON object on stdout:
//   t_fork_ns, t_exit_ns, t_gone_ns   CLOCK_MONOTONIC (system-wide) times: just before fork, when
//                                     wait4 returned, when the last process of the job was gone
//   wall_ms, gone_ms                  the same relative to t_fork
//   exit_code / signal                how COMMAND ended
//   maxrss_kb                         wait4's ru_maxrss: the peak RSS of COMMAND or of the largest
//                                     descendant COMMAND reaped, whichever is larger
//   cpu_s                             wait4's user + system time: COMMAND and the descendants it
//                                     reaped
//   alive_after_exit                  job processes still running when COMMAND had exited
//   leftover                          their names; killed_after_grace: how many needed SIGKILL
//   timed_out                         COMMAND hit the timeout
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Options {
  long timeout_ms = 120000;
  long grace_ms = 10000;
  std::string stdout_path = "/dev/null";
  std::string stderr_path = "/dev/null";
  std::vector<char*> command;
};

Options Parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) break;
    if (a == "--timeout-ms")
      o.timeout_ms = std::atol(argv[++i]);
    else if (a == "--grace-ms")
      o.grace_ms = std::atol(argv[++i]);
    else if (a == "--stdout")
      o.stdout_path = argv[++i];
    else if (a == "--stderr")
      o.stderr_path = argv[++i];
    else
      break;
  }
  for (; i < argc; ++i) o.command.push_back(argv[i]);
  if (o.command.empty()) {
    std::fprintf(
        stderr,
        "usage: proc_run [--timeout-ms T] [--grace-ms G] [--stdout F] [--stderr F] -- CMD...\n");
    std::exit(2);
  }
  o.command.push_back(nullptr);
  return o;
}

struct ProcInfo {
  pid_t ppid = 0;
  char state = '?';
  std::string comm;
};

// All processes on the machine, from /proc/<pid>/stat.
std::map<pid_t, ProcInfo> ReadProcesses() {
  std::map<pid_t, ProcInfo> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const auto open = line.find('(');
    const auto close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    ProcInfo info;
    info.comm = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 2));
    rest >> info.state >> info.ppid;
    out[pid] = info;
  }
  closedir(dir);
  return out;
}

// The live (non-zombie) descendants of this process.
std::vector<std::pair<pid_t, std::string>> LiveDescendants() {
  const auto procs = ReadProcesses();
  std::set<pid_t> tree{getpid()};
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& [pid, info] : procs) {
      if (!tree.count(pid) && tree.count(info.ppid)) {
        tree.insert(pid);
        grew = true;
      }
    }
  }
  std::vector<std::pair<pid_t, std::string>> live;
  for (const auto& [pid, info] : procs) {
    if (pid != getpid() && tree.count(pid) && info.state != 'Z') live.emplace_back(pid, info.comm);
  }
  return live;
}

volatile sig_atomic_t g_alarm = 0;
void OnAlarm(int) { g_alarm = 1; }

void ArmAlarm(long ms) {
  itimerval t{};
  t.it_value.tv_sec = ms / 1000;
  t.it_value.tv_usec = (ms % 1000) * 1000;
  setitimer(ITIMER_REAL, &t, nullptr);
}

void RedirectOrDie(const std::string& path, int fd) {
  const int f = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (f < 0 || dup2(f, fd) < 0) _exit(126);
  close(f);
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction sa {};
  sa.sa_handler = OnAlarm;  // no SA_RESTART: the alarm interrupts wait4
  sigaction(SIGALRM, &sa, nullptr);

  const std::int64_t t_fork = MonotonicNs();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    RedirectOrDie(o.stdout_path, STDOUT_FILENO);
    RedirectOrDie(o.stderr_path, STDERR_FILENO);
    execvp(o.command[0], o.command.data());
    _exit(127);
  }
  if (pid < 0) {
    std::perror("fork");
    return 1;
  }

  ArmAlarm(o.timeout_ms);
  int status = 0;
  rusage ru{};
  bool timed_out = false;
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      std::perror("wait4");
      return 1;
    }
    if (g_alarm) {
      timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
  }
  const std::int64_t t_exit = MonotonicNs();
  ArmAlarm(0);

  // Anything still ours now is a leftover of the job (or a zombie it did not reap).
  std::int64_t t_gone = t_exit;
  int alive_after_exit = 0;
  int killed = 0;
  std::vector<std::string> leftover;
  if (waitpid(-1, nullptr, WNOHANG) != -1 || errno != ECHILD) {
    for (const auto& [p, comm] : LiveDescendants()) {
      ++alive_after_exit;
      leftover.push_back(comm);
    }
    g_alarm = 0;
    ArmAlarm(o.grace_ms);
    for (;;) {
      const pid_t r = waitpid(-1, nullptr, 0);
      if (r > 0) continue;
      if (errno == ECHILD) break;
      if (g_alarm) {
        for (const auto& [p, comm] : LiveDescendants()) {
          kill(p, SIGKILL);
          ++killed;
        }
        g_alarm = 0;
        ArmAlarm(1000);
      }
    }
    t_gone = MonotonicNs();
  }

  std::printf("{\"t_fork_ns\":%lld,\"t_exit_ns\":%lld,\"t_gone_ns\":%lld,",
              static_cast<long long>(t_fork), static_cast<long long>(t_exit),
              static_cast<long long>(t_gone));
  std::printf("\"wall_ms\":%.3f,\"gone_ms\":%.3f,", static_cast<double>(t_exit - t_fork) / 1e6,
              static_cast<double>(t_gone - t_fork) / 1e6);
  std::printf("\"exit_code\":%d,\"signal\":%d,\"maxrss_kb\":%ld,\"cpu_s\":%.4f,",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0, ru.ru_maxrss,
              static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
  std::printf("\"alive_after_exit\":%d,\"killed_after_grace\":%d,\"timed_out\":%s,\"leftover\":[",
              alive_after_exit, killed, timed_out ? "true" : "false");
  for (std::size_t i = 0; i < leftover.size(); ++i)
    std::printf("%s%s", i ? "," : "", JsonString(leftover[i]).c_str());
  std::printf("]}\n");
  return 0;
}
