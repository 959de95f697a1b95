// test_worker: a tiny, scriptable worker for process tests. Actions run in argument order:
//
//   --exit N              exit with code N (ends the program)
//   --sleep MS            sleep MS milliseconds
//   --ignore-term         ignore SIGTERM from now on
//   --trap-term N         on SIGTERM print "trapped SIGTERM" on stdout and exit with code N
//   --die SIG             kill itself with signal SIG (number or name such as SEGV)
//   --children K          start K children that sleep forever in this worker's process group
//   --daemons K           start K double-forked, setsid() daemons that sleep forever
//   --children-ignore-term  children/daemons started after this ignore SIGTERM
//   --pid-file PATH       children/daemons started after this append their pid to PATH
//   --stdout-lines N      write N numbered lines to stdout;  --stderr-lines N: to stderr
//   --stdout-bytes N      write N bytes ('x', a newline every 64) to stdout
//   --check-fds           exit 3 (listing them on stderr) if any fd other than 0,1,2 is open
//   --print-env           print the environment, one KEY=VALUE per line
//   --print-cwd           print the working directory
//   --error-file MESSAGE  write torchrun's error-file JSON to $TORCHELASTIC_ERROR_FILE
//   --ready               print "ready" on stdout (tests wait for it before signalling)
// Without --exit, the program exits 0 after the last action.

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

extern char** environ;

namespace {

int child_flags_ignore_term = 0;
std::string pid_file;
int trap_code = 0;

void OnTrap(int) {
  const char text[] = "trapped SIGTERM\n";
  (void)!write(1, text, sizeof(text) - 1);
  _exit(trap_code);
}

int SignalNumber(const char* text) {
  if (text[0] >= '0' && text[0] <= '9') return std::atoi(text);
  const char* name = std::strncmp(text, "SIG", 3) == 0 ? text + 3 : text;
  for (int signo = 1; signo < NSIG; ++signo) {
    const char* abbrev = sigabbrev_np(signo);
    if (abbrev != nullptr && std::strcmp(abbrev, name) == 0) return signo;
  }
  std::fprintf(stderr, "test_worker: unknown signal %s\n", text);
  std::exit(2);
}

void AppendPid(pid_t pid) {
  if (pid_file.empty()) return;
  int fd = open(pid_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = std::to_string(pid) + "\n";
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

[[noreturn]] void SleepForever() {
  if (child_flags_ignore_term) signal(SIGTERM, SIG_IGN);
  for (;;) pause();
}

void StartChildren(int count, bool daemonize) {
  for (int i = 0; i < count; ++i) {
    pid_t pid = fork();
    if (pid < 0) std::exit(4);
    if (pid > 0) {
      if (!daemonize) AppendPid(pid);
      continue;
    }
    if (!daemonize) SleepForever();
    setsid();
    pid_t daemon = fork();
    if (daemon == 0) SleepForever();
    AppendPid(daemon);  // before exiting, so the worker's wait() below orders it
    _exit(0);
  }
  // Make sure every daemon's intermediate parent is gone and every pid is written.
  while (daemonize && count-- > 0) {
    int status;
    // The children started above that exit at once are the daemons' intermediate parents.
    wait(&status);
  }
}

void WriteLines(FILE* out, const char* name, long count) {
  for (long i = 0; i < count; ++i) std::fprintf(out, "%s line %ld\n", name, i);
  std::fflush(out);
}

void WriteBytes(long count) {
  std::string chunk;
  for (long i = 0; i < count; ++i) chunk.push_back((i % 64) == 63 ? '\n' : 'x');
  std::fwrite(chunk.data(), 1, chunk.size(), stdout);
  std::fflush(stdout);
}

int CheckFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 5;
  int own = dirfd(dir);
  int extra = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = std::atoi(entry->d_name);
    if (fd <= 2 || fd == own) continue;
    char target[256] = {};
    std::string link = std::string("/proc/self/fd/") + entry->d_name;
    (void)!readlink(link.c_str(), target, sizeof(target) - 1);
    std::fprintf(stderr, "test_worker: unexpected open fd %d -> %s\n", fd, target);
    ++extra;
  }
  closedir(dir);
  return extra == 0 ? 0 : 3;
}

void WriteErrorFile(const char* message) {
  const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (path == nullptr) return;
  FILE* out = std::fopen(path, "w");
  if (out == nullptr) return;
  std::fprintf(out,
               "{\"message\": {\"message\": \"RuntimeError: %s\", \"extraInfo\": "
               "{\"py_callstack\": \"Traceback (most recent call last):\\n  test_worker\\n"
               "RuntimeError: %s\\n\", \"timestamp\": \"%ld\"}}}\n",
               message, message, static_cast<long>(std::time(nullptr)));
  std::fclose(out);
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "test_worker: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return args[++i].c_str();
    };
    if (a == "--exit") return std::atoi(value());
    if (a == "--sleep")
      SleepMs(std::atol(value()));
    else if (a == "--ignore-term")
      signal(SIGTERM, SIG_IGN);
    else if (a == "--trap-term") {
      trap_code = std::atoi(value());
      signal(SIGTERM, OnTrap);
    } else if (a == "--die") {
      int signo = SignalNumber(value());
      signal(signo, SIG_DFL);
      raise(signo);
      return 99;
    } else if (a == "--children")
      StartChildren(std::atoi(value()), false);
    else if (a == "--daemons")
      StartChildren(std::atoi(value()), true);
    else if (a == "--children-ignore-term")
      child_flags_ignore_term = 1;
    else if (a == "--pid-file")
      pid_file = value();
    else if (a == "--stdout-lines")
      WriteLines(stdout, "out", std::atol(value()));
    else if (a == "--stderr-lines")
      WriteLines(stderr, "err", std::atol(value()));
    else if (a == "--stdout-bytes")
      WriteBytes(std::atol(value()));
    else if (a == "--check-fds") {
      if (int rc = CheckFds(); rc != 0) return rc;
    } else if (a == "--print-env") {
      for (char** e = environ; *e != nullptr; ++e) std::printf("%s\n", *e);
      std::fflush(stdout);
    } else if (a == "--print-cwd") {
      char buf[4096];
      std::printf("%s\n", getcwd(buf, sizeof(buf)) ? buf : "?");
      std::fflush(stdout);
    } else if (a == "--error-file")
      WriteErrorFile(value());
    else if (a == "--ready") {
      std::printf("ready\n");
      std::fflush(stdout);
    } else {
      std::fprintf(stderr, "test_worker: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  return 0;
}
