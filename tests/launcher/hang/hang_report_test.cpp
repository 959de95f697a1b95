// The words of a --hang-timeout ending.

#include "launcher/hang/hang_report.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

using std::chrono::milliseconds;

const std::string kStuckInAllReduce =
    "Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1536 "
    "in all_reduce\n"
    "  File \"/job/train.py\", line 42 in <module>\n";

TEST_CASE("HangNotice and HangReason", "[agent][hang_report]") {
  CHECK(HangNotice(milliseconds(5000))
            .starts_with("no worker made progress for 5 s (--hang-timeout"));
  CHECK(HangNotice(milliseconds(2500)).starts_with("no worker made progress for 2.5 s"));
  CHECK(HangReason(HangCause(milliseconds(5000)), kStuckInAllReduce) ==
        "no progress for 5 s (--hang-timeout); stopped with SIGABRT for its stack: all_reduce at "
        "train.py:42");
  CHECK(HangReason(RemoteHangCause(), "no dump here\n")
            .ends_with("<no Python stack: not a Python worker, or its stderr was not seen>"));
  // The repro: a Python worker that ignores SIGABRT was "not a Python worker".
  CHECK(HangReason(HangCause(milliseconds(5000)), "", false) ==
        "no progress for 5 s (--hang-timeout); it did not answer the stack request (SIGABRT "
        "ignored or blocked?)");
  // A dump says where, however the worker ended.
  CHECK(HangReason(HangCause(milliseconds(5000)), kStuckInAllReduce, false)
            .ends_with("stopped with SIGABRT for its stack: all_reduce at train.py:42"));
}

TEST_CASE("FormatHangReport names a rank that did not answer the stack request",
          "[agent][hang_report]") {
  RankStderr ignored{1, 1, "", false};
  CHECK(FormatHangReport({ignored}) ==
        "cpplaunch: where each rank was when the job stopped making progress:\n"
        "cpplaunch:   rank 1: <no stack: it did not answer the stack request (SIGABRT ignored or "
        "blocked?)>\n");
}

TEST_CASE("FormatHangReport: each rank's place, then the stacks", "[agent][hang_report]") {
  const std::string report = FormatHangReport({{0, 0, kStuckInAllReduce}, {3, 1, ""}});
  CHECK(report ==
        "cpplaunch: where each rank was when the job stopped making progress:\n"
        "cpplaunch:   rank 0: all_reduce at train.py:42\n"
        "cpplaunch:   rank 3: <no Python stack: not a Python worker, or its stderr was not seen>\n"
        "cpplaunch: rank 0 (local rank 0), most recent call first:\n"
        "    File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line "
        "1536 in all_reduce\n"
        "    File \"/job/train.py\", line 42 in <module>\n");
}

TEST_CASE("FormatHangReport: a worker stuck after its script's last line is said so",
          "[agent][hang_report]") {
  // What faulthandler prints for a Python process stuck while it exits (PyTorch 1.13's gloo
  // deadlock in ~ProcessGroupGloo; an atexit callback written in C).
  const std::string at_exit =
      "Fatal Python error: Aborted\n\nCurrent thread 0x00007f96c65ddb80 (most recent call "
      "first):\n  <no Python frame>\n";
  CHECK(HangReason(HangCause(milliseconds(5000)), at_exit) ==
        "no progress for 5 s (--hang-timeout); stopped with SIGABRT for its stack: after the "
        "script's last line (no Python frame: stuck while Python exits)");
  CHECK(FormatHangReport({{1, 1, at_exit}}) ==
        "cpplaunch: where each rank was when the job stopped making progress:\n"
        "cpplaunch:   rank 1: after the script's last line (no Python frame: stuck while Python "
        "exits)\n"
        "cpplaunch: rank 1 (local rank 1), most recent call first:\n"
        "    <no Python frame>\n");
}

}  // namespace
}  // namespace cpplaunch
