// --numa-binding on synthetic machines: a sysfs tree per machine, read by ReadNumaTopology and
// bound by NumaBindings. The expected sets are worked out by hand from torch/numa/binding.py.
#include "launcher/placement/numa_binding.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>

#include "launcher/placement/numa_topology.h"
#include "process_test_util.h"

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

// Writes a sysfs-like tree: nodes, CPUs (socket, core siblings, L3 complex) and PCI devices.
class FakeSysfs {
 public:
  void Put(const std::string& relative, const std::string& text) {
    const fs::path path = fs::path(dir_.path()) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }
  void Node(int node, const std::string& cpulist) {
    Put("devices/system/node/node" + std::to_string(node) + "/cpulist", cpulist);
  }
  // A CPU with caches as Linux shows them: L1d, L1i, L2 (per core) and the L3 `complex`.
  void Cpu(int cpu, int socket, const std::string& siblings, const std::string& complex) {
    const std::string d = "devices/system/cpu/cpu" + std::to_string(cpu) + "/";
    Put(d + "topology/physical_package_id", std::to_string(socket));
    Put(d + "topology/thread_siblings_list", siblings);
    Cache(d + "cache/index0/", "Data", 1, siblings);
    Cache(d + "cache/index1/", "Instruction", 1, siblings);
    Cache(d + "cache/index2/", "Unified", 2, siblings);
    if (!complex.empty()) Cache(d + "cache/index3/", "Unified", 3, complex);
  }
  void Pci(const std::string& address, const std::string& vendor, const std::string& cls,
           int numa_node) {
    const std::string d = "bus/pci/devices/" + address + "/";
    Put(d + "vendor", vendor);
    Put(d + "class", cls);
    Put(d + "numa_node", std::to_string(numa_node));
  }
  // NVIDIA 3D controllers, one per entry of `nodes`, at increasing PCI addresses.
  void Gpus(const std::vector<int>& nodes) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      char address[32];
      std::snprintf(address, sizeof(address), "0000:%02zx:00.0", 0x18 + 0x10 * i);
      Pci(address, "0x10de", "0x030200", nodes[i]);
    }
  }
  NumaTopology Read(const std::set<int>& cpus,
                    const std::optional<std::string>& visible = std::nullopt) const {
    return ReadNumaTopology(dir_.path(), cpus, visible);
  }

 private:
  void Cache(const std::string& d, const char* type, int level, const std::string& shared) {
    Put(d + "type", type);
    Put(d + "level", std::to_string(level));
    Put(d + "shared_cpu_list", shared);
  }
  testing::TempDir dir_;
};

std::set<int> Range(int first, int last) {
  std::set<int> cpus;
  for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  return cpus;
}

std::set<int> L(const char* list) { return ParseCpuList(list); }

// Intel-like: 2 sockets, one NUMA node each, 16 cores x 2 threads per socket (siblings i and
// i+32), one L3 per socket, 8 GPUs (0-3 on node 0, 4-7 on node 1).
void TwoSocketsSmt(FakeSysfs& sys) {
  sys.Put("devices/system/node/possible", "0-1");
  sys.Node(0, "0-15,32-47");
  sys.Node(1, "16-31,48-63");
  for (int cpu = 0; cpu < 64; ++cpu) {
    const int core = cpu % 32;
    const int socket = core / 16;
    sys.Cpu(cpu, socket, std::to_string(core) + "," + std::to_string(core + 32),
            socket == 0 ? "0-15,32-47" : "16-31,48-63");
  }
  sys.Gpus({0, 0, 0, 0, 1, 1, 1, 1});
}

// AMD-like NPS4: 2 sockets x 4 NUMA nodes, 8 cores per node, SMT off, L3 complexes of 4 cores,
// one GPU per node.
void EightNodesNoSmt(FakeSysfs& sys) {
  sys.Put("devices/system/node/possible", "0-7");
  for (int node = 0; node < 8; ++node) {
    sys.Node(node, std::to_string(8 * node) + "-" + std::to_string(8 * node + 7));
  }
  for (int cpu = 0; cpu < 64; ++cpu) {
    const int ccx = cpu / 4;
    sys.Cpu(cpu, cpu / 32, std::to_string(cpu),
            std::to_string(4 * ccx) + "-" + std::to_string(4 * ccx + 3));
  }
  sys.Gpus({0, 1, 2, 3, 4, 5, 6, 7});
}

std::vector<std::set<int>> Bind(const FakeSysfs& sys, const std::set<int>& allowed, int ranks,
                                NumaPolicy policy) {
  return NumaBindings(sys.Read(allowed), allowed, ranks, policy);
}

TEST_CASE("cpu lists parse and print as sysfs writes them") {
  CHECK(ParseCpuList("0-2,4,6-7\n") == std::set<int>{0, 1, 2, 4, 6, 7});
  CHECK(ParseCpuList("") == std::set<int>{});
  CHECK(FormatCpuList({0, 1, 2, 4, 6, 7}) == "0-2,4,6-7");
  CHECK(FormatCpuList({}) == "");
  CHECK_THROWS_AS(ParseCpuList("1-x"), std::invalid_argument);
  CHECK(ParseNumaPolicy("core-complex") == NumaPolicy::kCoreComplex);
  CHECK_FALSE(ParseNumaPolicy("all"));
}

TEST_CASE("numa binding on 2 sockets, 2 nodes, SMT on, 8 GPUs") {
  FakeSysfs sys;
  TwoSocketsSmt(sys);
  const std::set<int> all = Range(0, 63);
  SECTION("node: every CPU of the GPU's node") {
    auto b = Bind(sys, all, 8, NumaPolicy::kNode);
    CHECK(b[0] == L("0-15,32-47"));
    CHECK(b[5] == L("16-31,48-63"));
  }
  SECTION("socket: one node per socket, so the same as node") {
    auto b = Bind(sys, all, 8, NumaPolicy::kSocket);
    CHECK(b[3] == L("0-15,32-47"));
    CHECK(b[7] == L("16-31,48-63"));
  }
  SECTION("exclusive: 16 cores / 4 GPUs, both threads of each core") {
    auto b = Bind(sys, all, 8, NumaPolicy::kExclusive);
    CHECK(b[0] == L("0-3,32-35"));
    CHECK(b[1] == L("4-7,36-39"));
    CHECK(b[6] == L("24-27,56-59"));
    CHECK(b[7] == L("28-31,60-63"));
  }
  SECTION("core-complex: one L3 per node, shared by its four GPUs") {
    auto b = Bind(sys, all, 8, NumaPolicy::kCoreComplex);
    CHECK(b[3] == L("0-15,32-47"));
    CHECK(b[4] == L("16-31,48-63"));
  }
  SECTION("the agent's affinity limits every set") {
    const std::set<int> allowed = L("0-7,40-47,16-17");
    auto b = NumaBindings(sys.Read(allowed), allowed, 8, NumaPolicy::kNode);
    CHECK(b[0] == L("0-7,40-47"));
    CHECK(b[4] == L("16-17"));
    // exclusive: node 0 keeps 16 cores with a usable thread (0-7 and 8-15 through 40-47)
    const NumaTopology topology = sys.Read(allowed);
    CHECK(NumaCpusFor(topology, allowed, 0, NumaPolicy::kExclusive) == L("0-3"));
    CHECK(NumaCpusFor(topology, allowed, 2, NumaPolicy::kExclusive) == L("40-43"));
    // node 1 has two usable cores for four GPUs
    CHECK_THROWS_WITH(NumaBindings(sys.Read(allowed), allowed, 8, NumaPolicy::kExclusive),
                      Catch::Contains("local rank 4") && Catch::Contains("only 2 physical cores"));
  }
  SECTION("fewer workers than GPUs bind by local rank all the same") {
    auto b = Bind(sys, all, 2, NumaPolicy::kExclusive);
    REQUIRE(b.size() == 2);
    CHECK(b[1] == L("4-7,36-39"));
  }
}

TEST_CASE("numa binding on 2 sockets, 8 nodes, SMT off, two L3 complexes per node") {
  FakeSysfs sys;
  EightNodesNoSmt(sys);
  const std::set<int> all = Range(0, 63);
  CHECK(Bind(sys, all, 8, NumaPolicy::kNode)[5] == L("40-47"));
  CHECK(Bind(sys, all, 8, NumaPolicy::kSocket)[5] == L("32-63"));
  CHECK(Bind(sys, all, 8, NumaPolicy::kSocket)[2] == L("0-31"));
  CHECK(Bind(sys, all, 8, NumaPolicy::kExclusive)[5] == L("40-47"));
  // One GPU per node: position 0, the first of two equal complexes (lowest CPU first).
  CHECK(Bind(sys, all, 8, NumaPolicy::kCoreComplex)[5] == L("40-43"));
  SECTION("complexes with more usable CPUs come first") {
    const std::set<int> allowed = L("0-1,4-7,8-63");
    CHECK(Bind(sys, allowed, 8, NumaPolicy::kCoreComplex)[0] == L("4-7"));
  }
}

TEST_CASE("numa binding: several GPUs per node, uneven splits and complexes") {
  FakeSysfs sys;
  // One socket, 2 nodes of 10 cores (SMT off), L3 complexes of 3 cores (the last one has 1),
  // 4 GPUs on node 0, 3 on node 1.
  sys.Put("devices/system/node/possible", "0-1");
  sys.Node(0, "0-9");
  sys.Node(1, "10-19");
  for (int cpu = 0; cpu < 20; ++cpu) {
    const int base = cpu < 10 ? 0 : 10;
    const int first = base + (cpu - base) / 3 * 3;
    sys.Cpu(cpu, 0, std::to_string(cpu),
            std::to_string(first) + "-" + std::to_string(std::min(first + 2, base + 9)));
  }
  sys.Gpus({0, 0, 0, 0, 1, 1, 1});
  const std::set<int> all = Range(0, 19);
  SECTION("exclusive: 10 cores for 4 GPUs, the lowest two get one more") {
    auto b = Bind(sys, all, 7, NumaPolicy::kExclusive);
    CHECK(b[0] == L("0-2"));
    CHECK(b[1] == L("3-5"));
    CHECK(b[2] == L("6-7"));
    CHECK(b[3] == L("8-9"));
    CHECK(b[4] == L("10-13"));
    CHECK(b[5] == L("14-16"));
    CHECK(b[6] == L("17-19"));
  }
  SECTION("core-complex: 3+3+3+1 CPUs; the fourth GPU gets the small one") {
    auto b = Bind(sys, all, 7, NumaPolicy::kCoreComplex);
    CHECK(b[0] == L("0-2"));
    CHECK(b[1] == L("3-5"));
    CHECK(b[2] == L("6-8"));
    CHECK(b[3] == L("9"));
    CHECK(b[6] == L("16-18"));
  }
  SECTION("socket: both nodes") { CHECK(Bind(sys, all, 7, NumaPolicy::kSocket)[6] == L("0-19")); }
}

TEST_CASE("numa topology: which PCI devices are GPUs, and in what order") {
  FakeSysfs sys;
  sys.Put("devices/system/node/possible", "0-1");
  sys.Pci("0000:b1:00.0", "0x10de", "0x030000", 1);   // VGA controller
  sys.Pci("0000:1a:00.0", "0x10de", "0x030200", -1);  // 3D controller, no NUMA info: node 0
  sys.Pci("0000:1a:00.1", "0x10de", "0x040300", 0);   // the GPU's audio function: not a GPU
  sys.Pci("0000:05:00.0", "0x8086", "0x030000", 1);   // another vendor's display: not a GPU
  CHECK(sys.Read({}).gpu_nodes == std::vector<int>{0, 1});
  CHECK(sys.Read({}, std::string("1")).gpu_nodes == std::vector<int>{1});
  CHECK(sys.Read({}, std::string("1,0")).gpu_nodes == std::vector<int>{1, 0});
  CHECK(sys.Read({}, std::string("")).gpu_nodes.empty());
  CHECK_THROWS_WITH(sys.Read({}, std::string("GPU-8a9b")), Catch::Contains("UUID"));
}

TEST_CASE("numa binding without GPUs, or with too few, is one line") {
  FakeSysfs sys;
  sys.Put("devices/system/node/possible", "0");
  sys.Node(0, "0-3");
  for (int cpu = 0; cpu < 4; ++cpu) sys.Cpu(cpu, 0, std::to_string(cpu), "0-3");
  const std::set<int> all = Range(0, 3);
  CHECK_THROWS_WITH(Bind(sys, all, 2, NumaPolicy::kNode),
                    Catch::StartsWith("--numa-binding=node: this host has no NVIDIA GPU"));
  sys.Gpus({0});
  CHECK(Bind(sys, all, 1, NumaPolicy::kNode)[0] == all);
  CHECK_THROWS_WITH(Bind(sys, all, 2, NumaPolicy::kSocket),
                    Catch::StartsWith("--numa-binding=socket: local rank 1: no GPU 1"));
}

}  // namespace
}  // namespace cpplaunch
