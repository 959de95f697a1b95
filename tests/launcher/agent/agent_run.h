#pragma once
// Runs a real Agent on its own loop with a fake worker group (the test scripts each attempt's
// exits) and consoles the test reads back: the harness of agent_test and multi_host_job_test.

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "fake_worker_group.h"
#include "launcher/agent/agent.h"

namespace cpplaunch {

// A console the test can read back: an unlinked temporary file.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) { REQUIRE(file_ != nullptr); }
  ~Capture() { std::fclose(file_); }
  int fd() const { return fileno(file_); }
  std::string Text() const {
    std::ifstream in("/proc/self/fd/" + std::to_string(fd()));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::FILE* file_;
};

struct Run {
  int code = -1;
  std::string out;
  std::string err;
  FakeWorkerGroup* group = nullptr;  // valid during `script` only
  int starts = 0;
  std::vector<std::vector<ProcessSpec>> started;
  std::vector<FakeWorkerGroup::Stop> stops;
  std::vector<int> signals;  // what the agent sent the workers without stopping them
  int job_over_calls = 0;    // AgentParts::job_over
  int starts_at_job_over = -1;
};

using Script = std::function<void(boost::asio::io_context&, FakeWorkerGroup&,
                                  const std::vector<ProcessSpec>&)>;

// Runs an agent whose workers do what `script` says after each start.
inline Run RunAgent(LaunchOptions options, Script script, EnvMap env = {}) {
  Capture out, err;
  Run run;
  FakeWorkerGroup* group = nullptr;
  AgentParts parts;
  parts.stdout_fd = out.fd();
  parts.stderr_fd = err.fd();
  parts.make_worker_group = [&](boost::asio::io_context& io) {
    auto fake = std::make_unique<FakeWorkerGroup>();
    fake->loop = &io;
    fake->on_start = [&io, fake = fake.get(), script](const std::vector<ProcessSpec>& specs) {
      // The group's callbacks never run inside the call that caused them.
      boost::asio::post(io, [&io, fake, script, specs] { script(io, *fake, specs); });
    };
    group = fake.get();
    return fake;
  };
  parts.job_over = [&run, &group] {
    ++run.job_over_calls;
    run.starts_at_job_over = group != nullptr ? group->starts : 0;
  };
  Agent agent(std::move(options), std::move(env), std::move(parts));
  run.code = agent.Run();
  if (group != nullptr) {
    run.starts = group->starts;
    run.started = group->started;
    run.stops = group->stops;
    run.signals = group->signals;
  }
  run.out = out.Text();
  run.err = err.Text();
  return run;
}

inline void ExitAll(FakeWorkerGroup& group, const std::vector<ProcessSpec>& specs, int code) {
  for (const ProcessSpec& spec : specs) group.Exit(spec.id, WorkerExit::Exited(code));
}

inline bool HasEnv(const ProcessSpec& spec, const std::string& entry) {
  return std::find(spec.env.begin(), spec.env.end(), entry) != spec.env.end();
}

}  // namespace cpplaunch
