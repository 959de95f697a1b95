#pragma once
// The PMIx address exchange: under an MPI launcher that runs a PMIx server (Open MPI's mpirun
// since 2.0, PRRTE, Slurm's `srun --mpi=pmix`), every cpplaunch agent of the job learns the
// address that the job's rank 0 (the agent that hosts the store) advertises, with no flag.
//
// Protocol, one PMIx process per agent: PMIx_Init; rank 0 puts its address
// (advertised_address.h says which) under the key "cpplaunch.rank0_address" with global scope;
// PMIx_Commit; PMIx_Fence over the whole namespace with data collection; PMIx_Get of that key
// from rank 0; PMIx_Finalize. Every rank of the namespace must take part: the fence waits for
// all of them.
//
// PMIx is there when PMIX_NAMESPACE, PMIX_RANK and a PMIX_SERVER_URI* variable are set (PMIx's
// own rendezvous variables; mpirun sets them for each process it starts).
//
// The library: libpmix is loaded at run time (dlopen "libpmix.so.2", PMIx's soname from v2 to
// v5), so cpplaunch runs on hosts without it; pmix.h is needed at build time only. Built
// without pmix.h (CMake did not find it), the exchange is compiled out and says so.
//
// Never a hang: the whole exchange (library load, PMIx calls, the host's address lookup) runs
// in a child process (bounded_child.h) that is killed at `timeout`. Nothing PMIx loads, starts
// or changes reaches the agent: no library, thread, environment variable or signal handler.
// Call before the agent's loop thread and the workers exist (a single-threaded process).
//
// Errors: every failure is one line of text in PmixExchangeResult::error (no exception but
// std::system_error when the process cannot fork), naming the step that failed.

#include <chrono>
#include <string>

#include "worker_env/env_map.h"

namespace cpplaunch {

// True when `env` has the variables of a PMIx client process (see above). Pure.
bool PmixPresent(const EnvMap& env);

// True when this build can talk PMIx (pmix.h was found at build time).
bool PmixCompiledIn();

struct PmixExchangeResult {
  std::string address;  // rank 0's advertised address, numeric; empty on failure
  std::string error;    // one line, without a trailing period, when address is empty
  bool ok() const { return !address.empty(); }
};

// Runs the exchange. `env` is this process's environment (for PmixPresent and the address
// rule); libpmix itself reads the process environment.
PmixExchangeResult ExchangeRankZeroAddress(const EnvMap& env, std::chrono::milliseconds timeout);

}  // namespace cpplaunch
