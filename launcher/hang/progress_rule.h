#pragma once
// What counts as progress of a job for --hang-timeout. Pure.
//
// The job made progress between two samples when
//   * any worker wrote a line of output (stdout or stderr), or
//   * every worker still running used at least kMinCpuShare of one CPU (its whole process tree:
//     threads, data loaders, reaped children).
// Why "every" and not "any": in a job of collectives a rank that stops stalls every other
// rank, and ranks waiting in a collective may burn CPU while they wait (NCCL's host threads
// spin; so do busy-polling transports), so "some rank uses CPU" says nothing. A rank that is
// stuck blocked (a lock, a socket, a dead peer, sleep, a deadlock) uses none, and a healthy job
// keeps every rank busy. The rule's two blind spots (docs/user-guide.md says how to cover them):
//   * a silent phase in which one rank computes while another waits idle in a blocking call
//     (rank 0 saving a checkpoint while the others wait in gloo's barrier) longer than the
//     timeout looks like a hang: a line of output, or a longer timeout, covers it;
//   * ranks that all spin silently (a deadlock in which NCCL's waiting threads burn CPU) look
//     like progress: torchrun's file-timer watchdog, or the collectives' own timeout, covers it.

#include <chrono>
#include <cstdint>
#include <map>

namespace cpplaunch {

// The share of one CPU a worker must use between samples to count as busy.
inline constexpr double kMinCpuShare = 0.02;

struct ProgressSample {
  std::uint64_t output_lines = 0;          // lines written by every worker so far
  std::map<int, std::uint64_t> cpu_ticks;  // local rank -> its process tree's CPU time
};

// `ticks_per_second`: the unit of cpu_ticks (sysconf(_SC_CLK_TCK)). Workers that are in only one
// of the samples (they exited) are not considered; with none in both, only output counts.
bool Progressed(const ProgressSample& before, const ProgressSample& after,
                std::chrono::milliseconds elapsed, long ticks_per_second);

}  // namespace cpplaunch
