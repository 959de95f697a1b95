#include "launcher/process/job_sentinel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "launcher/process/posix_sys.h"

namespace cpplaunch {
namespace {

// The agent's cgroup v2 directory: the "0::<path>" line of /proc/self/cgroup joined to the
// mount point of the cgroup2 file system found in /proc/self/mountinfo.
std::optional<std::string> OwnCgroupDir() {
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line, relative;
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) == 0) relative = line.substr(3);
  }
  if (relative.empty()) return std::nullopt;
  std::ifstream mountinfo("/proc/self/mountinfo");
  while (std::getline(mountinfo, line)) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    fields >> id >> parent >> devno >> root >> mount_point;
    // In a cgroup namespace or bind mount, the mount shows the subtree starting at `root`.
    if (root != "/" && relative.rfind(root, 0) == 0) relative = relative.substr(root.size());
    if (relative == "/") relative.clear();
    return mount_point + relative;
  }
  return std::nullopt;
}

// Removes job cgroups left behind by agents that are gone and whose sentinel was killed too
// (e.g. a whole process tree SIGKILLed). rmdir fails on a cgroup that still has processes, so
// this never disturbs a running job.
void RemoveStaleJobCgroups(const std::string& parent) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("cpplaunch-", 0) != 0) continue;
    pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + 10));
    if (owner > 0 && !posix::ProcessExists(owner)) ::rmdir(entry.path().c_str());
  }
}

// Creates "<own cgroup>/cpplaunch-<pid>-<n>"; nullopt when cgroup v2 is absent or read-only.
std::optional<std::string> CreateJobCgroup() {
  static int counter = 0;
  std::optional<std::string> parent = OwnCgroupDir();
  if (!parent) return std::nullopt;
  RemoveStaleJobCgroups(*parent);
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string dir =
        *parent + "/cpplaunch-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) return std::nullopt;
  }
  return std::nullopt;
}

int OpenControl(const std::string& dir, const char* name, int flags) {
  return ::open((dir + "/" + name).c_str(), flags | O_CLOEXEC);
}

}  // namespace

std::unique_ptr<JobSentinel> JobSentinel::Start(JobSentinelOptions options) {
  std::unique_ptr<JobSentinel> sentinel(new JobSentinel());
  int fds[2];
  posix::SeqpacketPair(fds);
  sentinel->socket_fd_ = fds[0];

  int events_fd = -1;
  std::optional<std::string> dir;
  if (options.use_cgroup) dir = CreateJobCgroup();
  if (dir) {
    sentinel->kill_fd_ = OpenControl(*dir, "cgroup.kill", O_WRONLY);
    events_fd = OpenControl(*dir, "cgroup.events", O_RDONLY);
    sentinel->procs_fd_ = OpenControl(*dir, "cgroup.procs", O_WRONLY);
    if (sentinel->kill_fd_ < 0 || events_fd < 0 || sentinel->procs_fd_ < 0) {
      // No cgroup.kill (Linux < 5.14) or no access: process groups only.
      posix::CloseFd(sentinel->kill_fd_);
      posix::CloseFd(events_fd);
      posix::CloseFd(sentinel->procs_fd_);
      sentinel->kill_fd_ = events_fd = sentinel->procs_fd_ = -1;
      ::rmdir(dir->c_str());
      dir.reset();
    }
  }
  if (dir) sentinel->cgroup_path_ = *dir;

  posix::SentinelPlan plan;
  plan.socket_fd = fds[1];
  plan.cgroup_kill_fd = sentinel->kill_fd_;
  plan.cgroup_events_fd = events_fd;
  plan.cgroup_dir = dir ? sentinel->cgroup_path_.c_str() : nullptr;
  plan.agent_pid = ::getpid();
  try {
    sentinel->pid_ = posix::SpawnSentinel(plan);
  } catch (...) {
    posix::CloseFd(fds[1]);
    posix::CloseFd(events_fd);
    throw;
  }
  sentinel->pidfd_ = posix::PidfdOpen(sentinel->pid_);  // -1 on Linux < 5.3
  posix::CloseFd(fds[1]);
  posix::CloseFd(events_fd);

  // Probe that processes may really be put into the job cgroup (delegation, the "no internal
  // processes" rule). Where clone3(CLONE_INTO_CGROUP) exists, a throwaway child born inside
  // answers, and workers are born there too. Otherwise move the sentinel in and back out.
  std::optional<bool> born_inside;
  if (dir) {
    sentinel->dir_fd_ = ::open(dir->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (sentinel->dir_fd_ >= 0) born_inside = posix::ProbeCloneIntoCgroup(sentinel->dir_fd_);
    if (born_inside != true) {
      posix::CloseFd(sentinel->dir_fd_);
      sentinel->dir_fd_ = -1;
    }
  }
  if (dir && !born_inside) {
    std::string pid = std::to_string(sentinel->pid_);
    std::optional<std::string> home = OwnCgroupDir();
    bool moved_in = posix::WriteFile(*dir + "/cgroup.procs", pid);
    bool moved_back = moved_in && home && posix::WriteFile(*home + "/cgroup.procs", pid);
    if (!moved_back) {
      // The sentinel removes the (empty) directory when it exits; we just stop using it.
      posix::CloseFd(sentinel->procs_fd_);
      sentinel->procs_fd_ = -1;
      posix::CloseFd(sentinel->kill_fd_);
      sentinel->kill_fd_ = -1;
      sentinel->cgroup_path_.clear();
      if (moved_in) {
        // Stuck inside: the sentinel would kill itself with the cgroup; start without it.
        posix::SignalChild(sentinel->pid_, sentinel->pidfd_, SIGKILL);
        posix::WaitChildExit(sentinel->pid_, sentinel->pidfd_, 1000);
        ::rmdir(dir->c_str());
        JobSentinelOptions fallback = options;
        fallback.use_cgroup = false;
        return Start(fallback);
      }
    }
  }
  if (born_inside == false) {  // the cgroup refuses newcomers: process groups only
    posix::CloseFd(sentinel->procs_fd_);
    sentinel->procs_fd_ = -1;
    posix::CloseFd(sentinel->kill_fd_);
    sentinel->kill_fd_ = -1;
    sentinel->cgroup_path_.clear();
  }
  return sentinel;
}

JobSentinel::~JobSentinel() {
  Send(posix::kSentinelQuit, 0);
  posix::CloseFd(socket_fd_);
  if (!posix::WaitChildExit(pid_, pidfd_, 3000)) {
    posix::SignalChild(pid_, pidfd_, SIGKILL);
    posix::WaitChildExit(pid_, pidfd_, 1000);
  }
  posix::CloseFd(pidfd_);
  posix::CloseFd(procs_fd_);
  posix::CloseFd(dir_fd_);
  posix::CloseFd(kill_fd_);
  if (!cgroup_path_.empty()) ::rmdir(cgroup_path_.c_str());  // normally gone already
}

bool JobSentinel::Watch(pid_t pgid) { return Send(posix::kSentinelWatch, pgid); }
bool JobSentinel::Forget(pid_t pgid) { return Send(posix::kSentinelForget, pgid); }

void JobSentinel::KillCgroup() {
  if (kill_fd_ < 0) return;
  (void)!::write(kill_fd_, "1", 1);
  // Seen on Linux 6.18: once a cgroup has been killed, every child later born into it with
  // CLONE_INTO_CGROUP is SIGKILLed at birth (its kill sequence is compared with the parent's
  // cgroup, not the target's). Restarted workers therefore join by migration.
  posix::CloseFd(dir_fd_);
  dir_fd_ = -1;
}

bool JobSentinel::Send(char op, pid_t value) {
  return posix::SendSentinelMessage(socket_fd_, posix::SentinelMessage{op, value});
}

}  // namespace cpplaunch
