// Reading faulthandler's dumps and saying where a rank was stuck.

#include "launcher/hang/python_stack.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

// Python 3.11's faulthandler after SIGABRT, a rank blocked in all_reduce.
constexpr const char* kDump =
    "some earlier output\n"
    "Fatal Python error: Aborted\n"
    "\n"
    "Thread 0x00007fa58ba0e6c0 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
    "\n"
    "Current thread 0x00007fa58c856b80 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1536 "
    "in all_reduce\n"
    "  File \"/work/job/train.py\", line 42 in step\n"
    "  File \"/work/job/train.py\", line 50 in <module>\n"
    "\n"
    "Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)\n";

TEST_CASE("ParseFaulthandlerDump: every thread with its frames", "[agent][python_stack]") {
  auto threads = ParseFaulthandlerDump(kDump);
  REQUIRE(threads.size() == 2);
  CHECK(threads[0].frames.size() == 2);
  REQUIRE(threads[1].frames.size() == 3);
  CHECK(threads[1].frames[0].function == "all_reduce");
  CHECK(threads[1].frames[0].line == 1536);
  CHECK(threads[1].frames[2].file == "/work/job/train.py");
  CHECK(&MainThread(threads) == &threads[1]);
  CHECK(WhereStuck(MainThread(threads)) == "all_reduce at train.py:42");
  CHECK(FormatFrames(threads[0], "  ") ==
        "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
        "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n");
}

TEST_CASE("ParseFaulthandlerDump: the last dump wins; none gives nothing",
          "[agent][python_stack]") {
  const std::string second =
      "Fatal Python error: Aborted\n\nStack (most recent call first):\n"
      "  File \"sleeper.py\", line 7 in <module>\n";
  auto threads = ParseFaulthandlerDump(std::string(kDump) + second);
  REQUIRE(threads.size() == 1);
  CHECK(WhereStuck(threads[0]) == "<module> at sleeper.py:7");
  CHECK(ParseFaulthandlerDump("Traceback (most recent call last):\n  File \"x.py\", line 1, in "
                              "<module>\n")
            .empty());
  CHECK(ParseFaulthandlerDump("").empty());
}

TEST_CASE("WhereStuck: inside library code only, the innermost frame", "[agent][python_stack]") {
  PythonThread thread{"Current thread 0x1 (most recent call first):",
                      {{"/usr/lib/python3.11/selectors.py", 415, "select"},
                       {"/usr/lib/python3.11/threading.py", 320, "wait"}}};
  CHECK(WhereStuck(thread) == "select at selectors.py:415");
  CHECK(WhereStuck(PythonThread{}).empty());
}

}  // namespace
}  // namespace cpplaunch
