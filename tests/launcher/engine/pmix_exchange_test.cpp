// The PMIx exchange outside a PMIx job: whether PMIx is there is read from the environment,
// and without it the exchange fails at once with one line. The exchange itself runs under the
// real mpirun in tests/e2e/mpi_test.py (pmix_probe).

#include "launcher/engine/pmix_exchange.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;

EnvMap PmixEnv() {
  return {{"PMIX_NAMESPACE", "819724289"},
          {"PMIX_RANK", "0"},
          {"PMIX_SERVER_URI41", "819724288.0;tcp4://127.0.0.1:46061"}};
}

TEST_CASE("pmix exchange: PMIx is there with a namespace, a rank and a server", "[pmix]") {
  CHECK(PmixPresent(PmixEnv()));
  for (const char* missing : {"PMIX_NAMESPACE", "PMIX_RANK", "PMIX_SERVER_URI41"}) {
    EnvMap env = PmixEnv();
    env.erase(missing);
    CHECK_FALSE(PmixPresent(env));
  }
  EnvMap older = PmixEnv();
  older.erase("PMIX_SERVER_URI41");
  older["PMIX_SERVER_URI2"] = "1.0;tcp4://127.0.0.1:1";
  CHECK(PmixPresent(older));
  // Open MPI's own variables alone are not PMIx.
  CHECK_FALSE(PmixPresent({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
}

TEST_CASE("pmix exchange: without PMIx it fails at once with one line", "[pmix]") {
  const auto start = std::chrono::steady_clock::now();
  const PmixExchangeResult result = ExchangeRankZeroAddress({{"OMPI_COMM_WORLD_RANK", "0"}}, 30s);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK_FALSE(result.ok());
  CHECK(result.address.empty());
  CHECK(result.error.find('\n') == std::string::npos);
  if (PmixCompiledIn()) {
    CHECK(result.error.find("no PMIx server") != std::string::npos);
  } else {
    CHECK(result.error.find("built without PMIx") != std::string::npos);
  }
}

// A PMIx server that is not there (a port nobody listens on): libpmix reads the process
// environment, so the variables are set for real, then removed.
TEST_CASE("pmix exchange: an unreachable PMIx server is one line, within the timeout", "[pmix]") {
  if (!PmixCompiledIn()) return;  // the case above covers this build
  EnvMap env = PmixEnv();
  env["PMIX_SERVER_URI41"] = "819724288.0;tcp4://127.0.0.1:9";  // discard: refused on loopback
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
  const auto start = std::chrono::steady_clock::now();
  const PmixExchangeResult result = ExchangeRankZeroAddress(env, 5s);
  const auto took = std::chrono::steady_clock::now() - start;
  for (const auto& entry : env) ::unsetenv(entry.first.c_str());
  INFO(result.error);
  CHECK_FALSE(result.ok());
  CHECK(took < 7s);
  CHECK(result.error.find('\n') == std::string::npos);
  CHECK((result.error.find("PMIx_Init") != std::string::npos ||
         result.error.find("cannot load libpmix") != std::string::npos));
}

}  // namespace
}  // namespace cpplaunch
