#pragma once
// A WorkerGroup without processes, for the policy tests (Supervisor, Agent). The test plays the
// processes: Exit() reports a worker's end, FinishStop() completes pending StopAll calls.
// With `loop` set, StopAll completes by itself on that loop instead (every live worker dies of
// the stop signal), and `on_start` lets a test script each attempt's exits.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <vector>

#include "launcher/process/worker_group.h"

namespace cpplaunch {

class FakeWorkerGroup final : public WorkerGroup {
 public:
  using Clock = std::chrono::system_clock;

  void SetExitCallback(ExitCallback on_exit) override { on_exit_ = std::move(on_exit); }
  void Start(std::vector<ProcessSpec> specs) override {
    for (const ProcessSpec& spec : specs) live_[spec.id] = 1000 + spec.id;
    ++starts;
    started.push_back(specs);
    if (on_start) on_start(started.back());
  }
  void Signal(int signo) override { signals.push_back(signo); }
  void StopAll(int signo, std::chrono::milliseconds grace, StopCallback done) override {
    stops.push_back({signo, grace});
    stop_done_.push_back(std::move(done));
    if (loop == nullptr) return;
    boost::asio::post(*loop, [this, signo] {
      while (!live_.empty()) Exit(live_.begin()->first, WorkerExit::Signaled(signo));
      FinishStop();
    });
  }
  std::size_t running() const override { return live_.size(); }
  std::vector<LiveWorker> live() const override {
    std::vector<LiveWorker> workers;
    for (const auto& [id, pid] : live_) workers.push_back(LiveWorker{id, pid});
    return workers;
  }

  // A worker exits `at` seconds after the epoch.
  void Exit(int id, WorkerExit exit, int at = 0) {
    pid_t pid = live_.at(id);
    live_.erase(id);
    on_exit_(WorkerExitEvent{id, pid, exit, Clock::time_point(std::chrono::seconds(at))});
  }
  // Completes every pending StopAll.
  void FinishStop(StopResult result = {}) {
    auto pending = std::move(stop_done_);
    stop_done_.clear();
    for (auto& done : pending) done(result);
  }

  struct Stop {
    int signo;
    std::chrono::milliseconds grace;
  };
  int starts = 0;
  std::vector<std::vector<ProcessSpec>> started;  // the specs of every Start()
  std::vector<int> signals;
  std::vector<Stop> stops;
  boost::asio::io_context* loop = nullptr;
  std::function<void(const std::vector<ProcessSpec>&)> on_start;

 private:
  ExitCallback on_exit_;
  std::map<int, pid_t> live_;
  std::vector<StopCallback> stop_done_;
};

}  // namespace cpplaunch
