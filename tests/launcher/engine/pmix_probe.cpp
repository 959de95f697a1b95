// pmix_probe: one rank of an MPI job that performs cpplaunch's PMIx address exchange and says
// what it got, for tests/e2e/mpi_test.py under the real mpirun.
//
// usage: pmix_probe [--timeout-ms N] [--absent-rank R --absent-ms M]
// Prints "rank=<PMIX_RANK> address=<a> ms=<t>" (exit 0) or "rank=<r> error=<line> ms=<t>"
// (exit 1); rank 0 first prints "advertised=<the address its host advertises>". The absent
// rank takes no part: it sleeps M ms and exits 0, so the others' exchange cannot complete.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "launcher/engine/address_facts.h"
#include "launcher/engine/pmix_exchange.h"

extern char** environ;

int main(int argc, char** argv) {
  using namespace cpplaunch;
  long timeout_ms = 20000;
  long absent_rank = -1;
  long absent_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--timeout-ms") == 0) timeout_ms = value;
    if (std::strcmp(argv[i], "--absent-rank") == 0) absent_rank = value;
    if (std::strcmp(argv[i], "--absent-ms") == 0) absent_ms = value;
  }
  EnvMap env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq != nullptr)
      env.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  }
  const std::string rank = Lookup(env, "PMIX_RANK").value_or("?");
  if (rank == std::to_string(absent_rank)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(absent_ms));
    std::printf("rank=%s absent\n", rank.c_str());
    return 0;
  }
  if (rank == "0") {
    std::printf("advertised=%s\n", ChooseAdvertisedAddress(GatherAddressFacts(env)).c_str());
  }
  const auto start = std::chrono::steady_clock::now();
  const PmixExchangeResult result =
      ExchangeRankZeroAddress(env, std::chrono::milliseconds(timeout_ms));
  const long long took = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  if (result.ok()) {
    std::printf("rank=%s address=%s ms=%lld\n", rank.c_str(), result.address.c_str(), took);
    return 0;
  }
  std::printf("rank=%s error=%s ms=%lld\n", rank.c_str(), result.error.c_str(), took);
  return 1;
}
