#pragma once
// A WorkerGroup that lets the agent see every worker exit the moment it is reported, before the
// Supervisor does (which installs its own exit callback). The multi-host agent uses it to tell
// the other hosts about a local failure at once, not after the local teardown has finished.
// Forwards everything else unchanged. Threads: as WorkerGroup.

#include <utility>

#include "launcher/process/worker_group.h"

namespace cpplaunch {

class TappedWorkerGroup final : public WorkerGroup {
 public:
  // `inner` must outlive this object.
  TappedWorkerGroup(WorkerGroup& inner, ExitCallback tap) : inner_(inner), tap_(std::move(tap)) {}

  void SetExitCallback(ExitCallback on_exit) override {
    inner_.SetExitCallback([this, on_exit = std::move(on_exit)](const WorkerExitEvent& event) {
      tap_(event);
      on_exit(event);
    });
  }
  void Start(std::vector<ProcessSpec> specs) override { inner_.Start(std::move(specs)); }
  void Signal(int signo) override { inner_.Signal(signo); }
  void StopAll(int signo, std::chrono::milliseconds grace, StopCallback done) override {
    inner_.StopAll(signo, grace, std::move(done));
  }
  std::size_t running() const override { return inner_.running(); }
  std::vector<LiveWorker> live() const override { return inner_.live(); }

 private:
  WorkerGroup& inner_;
  ExitCallback tap_;
};

}  // namespace cpplaunch
