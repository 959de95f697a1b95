#pragma once
// The words of a --hang-timeout ending: the line the agent says when it gives up on the job,
// each stopped worker's reason in the failure summary, and the block after the summary with
// where each rank was stuck and its stack. Pure (python_stack.h reads the dumps).

#include <chrono>
#include <string>
#include <vector>

namespace cpplaunch {

// "no worker made progress for 5 s (--hang-timeout: ...); collecting ..." (without
// "cpplaunch: ").
std::string HangNotice(std::chrono::milliseconds timeout);
// What another host's hang makes this one say when its own workers are stalled too.
std::string RemoteHangNotice();

// Why the workers were stopped: "no progress for 5 s (--hang-timeout)" here; for a hang
// declared by another host, "stalled here too when another host's --hang-timeout fired".
std::string HangCause(std::chrono::milliseconds timeout);
std::string RemoteHangCause();

// The summary's reason for a worker stopped after a hang, from its stderr since then:
// "<cause>; stopped with SIGABRT for its stack: all_reduce at train.py:42". `answered`: the
// worker died of the SIGABRT (as Python does with faulthandler on, and any program that does
// not handle it); a worker that did not, and left no dump, ignored or blocked the signal:
// "<cause>; it did not answer the stack request (SIGABRT ignored or blocked?)".
std::string HangReason(const std::string& cause, const std::string& stderr_text,
                       bool answered = true);

struct RankStderr {
  int global_rank = 0;
  int local_rank = 0;
  std::string text;      // what the worker wrote on stderr after the hang
  bool answered = true;  // it died of the SIGABRT (HangReason)
};

// The block printed after the failure summary, every line starting with "cpplaunch: " or
// indented frames:
//   cpplaunch: where each rank was when the job stopped making progress:
//   cpplaunch:   rank 0: all_reduce at train.py:42
//   cpplaunch:   rank 3: <no Python stack: not a Python worker, or its stderr was not seen>
//   cpplaunch:   rank 5: <no stack: it did not answer the stack request (SIGABRT ignored or
//                        blocked?)>   (on one line)
//   cpplaunch: rank 0 (local rank 0), most recent call first:
//       File ".../distributed_c10d.py", line 1536 in all_reduce
//       File "train.py", line 42 in <module>
// Ranks in the given order.
std::string FormatHangReport(const std::vector<RankStderr>& ranks);

}  // namespace cpplaunch
