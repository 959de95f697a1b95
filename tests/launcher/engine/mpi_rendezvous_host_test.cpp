// FindMpiRendezvousHost when a PMIx server is named but cannot answer: one line with PMIx's
// reason and the flags to add. (Without PMIx: mpi_world_test; the exchange that succeeds runs
// under the real mpirun in tests/e2e/mpi_test.py.)

#include "launcher/engine/mpi_rendezvous_host.h"

#include <stdlib.h>

#include <catch2/catch.hpp>

#include "launcher/engine/pmix_exchange.h"

namespace cpplaunch {
namespace {

TEST_CASE("MPI with a PMIx server that does not answer: one line, PMIx's reason, the flags") {
  const EnvMap env = {{"OMPI_COMM_WORLD_RANK", "1"},
                      {"OMPI_COMM_WORLD_SIZE", "2"},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
                      {"PMIX_NAMESPACE", "819724289"},
                      {"PMIX_RANK", "1"},
                      // discard: refused on loopback
                      {"PMIX_SERVER_URI41", "819724288.0;tcp4://127.0.0.1:9"}};
  // libpmix reads the process environment: set for real, removed after.
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
  EngineFacts facts;
  facts.engine = Engine::kMpi;
  facts.label = "Open MPI job";
  std::string error;
  const std::optional<std::string> host = FindMpiRendezvousHost(env, facts, &error);
  for (const auto& entry : env) ::unsetenv(entry.first.c_str());
  CHECK_FALSE(host);
  INFO(error);
  const std::string start = PmixCompiledIn()
                                ? "Open MPI job: no MPI variable names rank 0's host and PMIx "
                                  "could not tell (PMIx_Init: "
                                : "Open MPI job: no MPI variable names rank 0's host and PMIx "
                                  "could not tell (this cpplaunch was built without PMIx";
  CHECK(error.find(start) == 0);
  CHECK(error.find("add --master-addr=HOST") != std::string::npos);
  CHECK(error.find("--rdzv-endpoint=HOST:PORT") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace cpplaunch
