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

#include "base/fd_io.h"
#include "launcher/process/posix_sys.h"
#include "launcher/process/sentinel_process.h"

namespace cpplaunch {
namespace {

// Where cgroup2 is mounted on a pure v2 system and on a hybrid one (systemd's layouts).
constexpr const char* kUsualCgroup2Mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};

// The agent's cgroup v2 directory: the "0::<path>" line of /proc/self/cgroup joined to the
// mount point of the cgroup2 file system. That mount is looked for at its usual places first:
// a statfs each, where reading /proc/self/mountinfo took about 65 us of every launch here (and
// grows with the host's mounts). A mount of a subtree (a container without a cgroup namespace)
// shows no directory at the joined path there, and /proc/self/mountinfo then says where it is.
std::optional<std::string> OwnCgroupDir() {
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line, relative;
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) == 0) relative = line.substr(3);
  }
  if (relative.empty()) return std::nullopt;
  for (const char* mount : kUsualCgroup2Mounts) {
    if (!posix::IsCgroup2Mount(mount)) continue;
    const std::string dir = relative == "/" ? std::string(mount) : mount + relative;
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) return dir;
    break;
  }
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

// Creates "<own cgroup>/cpplaunch-<agent pid>-<n>"; nullopt when cgroup v2 is absent or
// read-only. The pid keeps names unique across agents sharing a parent cgroup; n, the first free
// number, those of one process (tests start several sentinels).
std::optional<std::string> CreateJobCgroup(pid_t agent_pid) {
  std::optional<std::string> parent = OwnCgroupDir();
  if (!parent) return std::nullopt;
  RemoveStaleJobCgroups(*parent);
  for (int n = 0; n < 16; ++n) {
    std::string dir = *parent + "/cpplaunch-" + std::to_string(agent_pid) + "-" + std::to_string(n);
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (LastError() != EEXIST) return std::nullopt;
  }
  return std::nullopt;
}

UniqueFd OpenControl(const std::string& dir, const char* name, int flags) {
  return UniqueFd(::open((dir + "/" + name).c_str(), flags | O_CLOEXEC));
}

// Creates the job cgroup and opens its control files; nullopt (and no directory left behind)
// when any of them is missing (no cgroup.kill before Linux 5.14) or not accessible. About
// 0.25 ms here: it runs in the sentinel (SentinelPlan::make_cgroup), on the other core while the
// agent prepares the job, unless the agent may use only one CPU (see Start).
std::optional<posix::JobCgroupFiles> MakeJobCgroup(pid_t agent_pid) {
  std::optional<std::string> dir = CreateJobCgroup(agent_pid);
  if (!dir) return std::nullopt;
  {
    posix::JobCgroupFiles cgroup{*dir, OpenControl(*dir, "cgroup.kill", O_WRONLY),
                                 OpenControl(*dir, "cgroup.events", O_RDONLY),
                                 OpenControl(*dir, "cgroup.procs", O_WRONLY),
                                 UniqueFd(::open(dir->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC))};
    if (cgroup.kill && cgroup.events && cgroup.procs) return cgroup;
  }  // whatever was opened is closed before the directory goes
  ::rmdir(dir->c_str());
  return std::nullopt;
}

// How long the agent waits for the sentinel's cgroup at its first worker: the sentinel needs
// well under a millisecond, so only a sentinel that is stopped or starved waits this long, and
// the job then runs with process groups only.
constexpr int kCgroupReportMs = 2000;

}  // namespace

std::unique_ptr<JobSentinel> JobSentinel::Start(JobSentinelOptions options) {
  std::unique_ptr<JobSentinel> sentinel(new JobSentinel());
  auto [agent_end, sentinel_end] = posix::SeqpacketPair();
  sentinel->socket_fd_ = std::move(agent_end);
  posix::SentinelPlan plan;
  plan.socket_fd = sentinel_end.get();
  plan.agent_pid = ::getpid();
  // With a single CPU allowed, handing the cgroup over cost more than making it here (paired
  // launches under taskset -c 0: 1.054 of the time).
  std::optional<posix::JobCgroupFiles> made;
  if (options.use_cgroup && !posix::AnotherCpuAllowed()) {
    made = MakeJobCgroup(plan.agent_pid);
    if (made) plan.cgroup = &*made;
  } else if (options.use_cgroup) {
    plan.make_cgroup = &MakeJobCgroup;
  }
  // If the fork fails, every descriptor above is closed by its owner on the way out.
  sentinel->pid_ = posix::SpawnSentinel(plan);
  sentinel->pidfd_ = posix::PidfdOpen(sentinel->pid_).fd;  // empty on Linux < 5.3
  sentinel->cgroup_pending_ = plan.make_cgroup != nullptr;
  if (made) sentinel->TakeCgroup(std::move(*made));
  return sentinel;  // the sentinel's end (and `events`) close here: it has its own copies
}

// Without a report in time (a sentinel stopped or starved), the job runs with process groups only.
void JobSentinel::AwaitCgroup() {
  if (!cgroup_pending_) return;
  cgroup_pending_ = false;
  std::optional<posix::JobCgroupFiles> cgroup =
      posix::ReceiveSentinelCgroup(socket_fd_.get(), kCgroupReportMs);
  if (cgroup) TakeCgroup(std::move(*cgroup));
}

// Whether processes may really be put into the job cgroup (delegation, the "no internal
// processes" rule) is learnt from the first worker, not probed with a throwaway child before it:
// workers are born inside with clone3(CLONE_INTO_CGROUP), and a refusal creates no process (see
// CloneIntoCgroupRefused). Only without the directory's descriptor, where workers migrate, is the
// sentinel moved in and back out first; one stuck inside is handled as in CloneIntoCgroupRefused.
void JobSentinel::TakeCgroup(posix::JobCgroupFiles cgroup) {
  cgroup_path_ = std::move(cgroup.dir);
  kill_fd_ = std::move(cgroup.kill);
  procs_fd_ = std::move(cgroup.procs);
  dir_fd_ = std::move(cgroup.dir_fd);
  if (!dir_fd_) (void)ProbeMigration();
}

bool JobSentinel::ProbeMigration() {
  const std::string pid = std::to_string(pid_);
  const std::optional<std::string> home = OwnCgroupDir();
  const bool moved_in = posix::WriteFile(cgroup_path_ + "/cgroup.procs", pid);
  const bool moved_back = moved_in && home && posix::WriteFile(*home + "/cgroup.procs", pid);
  if (moved_back) return true;
  // The sentinel removes the (empty) directory when it exits; we just stop using it.
  DropCgroup();
  return !moved_in;
}

void JobSentinel::CloneIntoCgroupRefused(int error) {
  AwaitCgroup();
  dir_fd_.reset();
  if (posix::OutOfResources(error)) return;  // not the cgroup's doing: migrate the next ones
  if (!posix::CloneIntoCgroupUnsupported(error)) {
    DropCgroup();  // the cgroup refuses newcomers: process groups only
    return;
  }
  // No clone3: workers migrate, if the sentinel's trip in and out shows they may (else it drops
  // the cgroup). A sentinel stuck inside dies by the cgroup's kill only after killing the
  // watched groups, at the end.
  (void)ProbeMigration();
}

void JobSentinel::DropCgroup() {
  procs_fd_.reset();
  kill_fd_.reset();
  cgroup_path_.clear();
}

void JobSentinel::Quit() {
  if (!socket_fd_) return;
  // A report never awaited stays unread: the sentinel removes its cgroup itself.
  cgroup_pending_ = false;
  Send(posix::kSentinelQuit, 0);
  // Closed at once: should the Quit not have fit, EOF still ends the sentinel's loop.
  socket_fd_.reset();
}

JobSentinel::~JobSentinel() {
  Quit();
  if (!posix::WaitChildExit(pid_, pidfd_.get(), 3000)) {
    posix::SignalChild(pid_, pidfd_.get(), SIGKILL);
    posix::WaitChildExit(pid_, pidfd_.get(), 1000);
  }
  if (cgroup_path_.empty()) return;
  // Our handles on the cgroup go before the directory does.
  procs_fd_.reset();
  dir_fd_.reset();
  kill_fd_.reset();
  ::rmdir(cgroup_path_.c_str());  // normally removed by the sentinel already
}

bool JobSentinel::Watch(pid_t pgid) { return Send(posix::kSentinelWatch, pgid); }
bool JobSentinel::Forget(pid_t pgid) { return Send(posix::kSentinelForget, pgid); }

void JobSentinel::KillCgroup() {
  AwaitCgroup();
  if (!kill_fd_) return;
  (void)WriteSome(kill_fd_.get(), "1");
  // Seen on Linux 6.18: once a cgroup has been killed, every child later born into it with
  // CLONE_INTO_CGROUP is SIGKILLed at birth (its kill sequence is compared with the parent's
  // cgroup, not the target's). Restarted workers therefore join by migration.
  dir_fd_.reset();
}

bool JobSentinel::Send(char op, pid_t value) {
  return posix::SendSentinelMessage(socket_fd_.get(), posix::SentinelMessage{op, value});
}

}  // namespace cpplaunch
