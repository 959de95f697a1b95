// The one-line hint when every failed worker hit PyTorch's "built without libuv" error.

#include "launcher/diagnosis/libuv_hint.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace cpplaunch {
namespace {

const std::string kTorchError =
    "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was build without "
    "libuv support, run with USE_LIBUV=0 to disable it.";

TEST_CASE("LibuvHint: only when every failed worker says so", "[agent][libuv_hint]") {
  CHECK_FALSE(LibuvHint({}, WorkerStore::kAgent));
  CHECK_FALSE(LibuvHint({kTorchError, "ZeroDivisionError"}, WorkerStore::kAgent));
  auto agent = LibuvHint({kTorchError, "x\n" + kTorchError}, WorkerStore::kAgent);
  REQUIRE(agent);
  CHECK(agent->find("--worker-store=rank0 and USE_LIBUV=0") != std::string::npos);
  CHECK(agent->find('\n') == std::string::npos);
  auto rank0 = LibuvHint({kTorchError}, WorkerStore::kRank0);
  REQUIRE(rank0);
  CHECK(rank0->find("set USE_LIBUV=0") != std::string::npos);
  CHECK(rank0->find("--worker-store") == std::string::npos);
}

TEST_CASE("FailureText: the error file's message and the stderr log's tail",
          "[agent][libuv_hint]") {
  WorkerFailure failure;
  CHECK(FailureText(failure, "/nonexistent/stderr.log").empty());
  failure.error = WorkerError{};
  failure.error->message = "DistStoreError: boom";
  failure.error->traceback = "Traceback ...";
  CHECK(FailureText(failure, "") == "DistStoreError: boom\nTraceback ...\n");

  const auto log = std::filesystem::temp_directory_path() / "cpplaunch_libuv_hint_test.log";
  {
    std::ofstream out(log, std::ios::binary);
    out << std::string(100 * 1024, 'x') << kTorchError << "\n";
  }
  const std::string text = FailureText(WorkerFailure{}, log);
  std::filesystem::remove(log);
  CHECK(text.size() == 64 * 1024);
  CHECK(text.find(kTorchError) != std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
