#include "launcher/placement/gpu_count.h"

#include <unistd.h>

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

int Visible(const char* value, int physical) {
  return VisibleGpuCount(value ? std::optional<std::string>(value) : std::nullopt, physical);
}

TEST_CASE("CUDA_VISIBLE_DEVICES unset: every physical GPU") {
  CHECK(Visible(nullptr, 4) == 4);
  CHECK(Visible(nullptr, 0) == 0);
}

TEST_CASE("ordinal lists as torch.cuda.device_count() reads them") {
  CHECK(Visible("", 4) == 0);
  CHECK(Visible("0,1", 4) == 2);
  CHECK(Visible(" 2 , 3", 4) == 2);
  CHECK(Visible("0,2,x,3", 4) == 2);       // cut at the first invalid entry
  CHECK(Visible("1gpu,2ampere", 4) == 2);  // strtoul-like
  CHECK(Visible("0,-1,1", 4) == 1);        // a negative value ends the list
  CHECK(Visible("0,0", 4) == 0);           // a repeat empties the list
  CHECK(Visible("0,7,1", 2) == 1);         // cut at the first index past the device count
  CHECK(Visible("5", 2) == 0);
  CHECK(Visible("NoDevFiles", 4) == 0);
  CHECK(Visible("0,1", 0) == 0);
}

TEST_CASE("UUID lists count one device per entry") {
  CHECK(Visible("GPU-aaaa,GPU-bbbb", 4) == 2);
  CHECK(Visible("GPU-aaaa,1,GPU-cccc", 4) == 1);
  CHECK(Visible("GPU-aaaa,GPU-aaaa", 4) == 0);
  CHECK(Visible("MIG-aaaa", 4) == 1);
  CHECK(Visible("GPU-a,GPU-b,GPU-c", 2) == 2);
}

TEST_CASE("host probes read the system") {
  CHECK(OnlineCpuCount() == static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  CHECK(PhysicalGpuCount() >= 0);
}

}  // namespace
}  // namespace cpplaunch
