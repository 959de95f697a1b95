// What starting N workers costs with each way of putting them into a job cgroup, measured on
// this machine. Explains the launch-overhead figures; it launches nothing of cpplaunch's.
//
//   spawn_cost [N] [REPETITIONS]      (defaults 8 and 15)
//
// Per repetition, N children exec /bin/true and are all waited for, three ways:
//   plain     vfork + exec
//   migrate   vfork; the child writes "0" to the job cgroup's cgroup.procs, then execs
//             (how a launcher joins workers to a cgroup when it has only fork/vfork)
//   clone3    clone3(CLONE_VFORK | CLONE_INTO_CGROUP): born inside the cgroup (Linux >= 5.7)
// The cgroup is a fresh child of this process's own cgroup v2 directory, removed at the end.
// Output: one JSON object with each way's per-repetition milliseconds; {"available": false, ...}
// when no writable cgroup v2 directory exists.
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

double NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The cgroup v2 directory this process is in: the cgroup2 mount point + the "0::" path.
std::string OwnCgroupDir() {
  std::string mount;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line);
    std::string skip;
    fields >> skip >> skip >> skip >> skip >> mount;
    break;
  }
  std::string path;
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  }
  if (mount.empty() || path.empty()) return "";
  return path == "/" ? mount : mount + path;
}

void WaitAll() {
  while (wait(nullptr) > 0 || errno == EINTR) {
  }
}

char kTrue[] = "/bin/true";
char* const kArgv[] = {kTrue, nullptr};

double Plain(int n) {
  const double t0 = NowMs();
  for (int i = 0; i < n; ++i) {
    if (vfork() == 0) {
      execv(kTrue, kArgv);
      _exit(127);
    }
  }
  WaitAll();
  return NowMs() - t0;
}

double Migrate(int n, int procs_fd) {
  const double t0 = NowMs();
  for (int i = 0; i < n; ++i) {
    if (vfork() == 0) {
      if (write(procs_fd, "0", 1) != 1) _exit(126);
      execv(kTrue, kArgv);
      _exit(127);
    }
  }
  WaitAll();
  return NowMs() - t0;
}

double Clone3(int n, int dir_fd) {
  const double t0 = NowMs();
  for (int i = 0; i < n; ++i) {
    clone_args args{};
    args.flags = CLONE_VFORK | CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<__u64>(dir_fd);
    const long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
      execv(kTrue, kArgv);
      _exit(127);
    }
    if (pid < 0) return -1;
  }
  WaitAll();
  return NowMs() - t0;
}

void PrintList(const char* name, const std::vector<double>& v, bool last) {
  std::printf("\"%s\":[", name);
  for (std::size_t i = 0; i < v.size(); ++i) std::printf("%s%.3f", i ? "," : "", v[i]);
  std::printf("]%s", last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 15;
  const std::string parent = OwnCgroupDir();
  const std::string dir = parent + "/bench-spawn-" + std::to_string(getpid());
  if (parent.empty() || mkdir(dir.c_str(), 0755) != 0) {
    std::printf("{\"available\":false,\"reason\":\"no writable cgroup v2 directory (%s)\"}\n",
                parent.c_str());
    return 0;
  }
  const int procs_fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::vector<double> plain, migrate, clone3;
  for (int r = 0; r < reps && procs_fd >= 0 && dir_fd >= 0; ++r) {  // interleaved
    plain.push_back(Plain(n));
    migrate.push_back(Migrate(n, procs_fd));
    clone3.push_back(Clone3(n, dir_fd));
  }
  close(procs_fd);
  close(dir_fd);
  rmdir(dir.c_str());
  std::printf("{\"available\":true,\"workers\":%d,\"cgroup\":\"%s\",", n, dir.c_str());
  PrintList("plain_ms", plain, false);
  PrintList("migrate_ms", migrate, false);
  PrintList("clone3_ms", clone3, true);
  std::printf("}\n");
  return 0;
}
