#pragma once
// The job's engine as options: what Slurm, an MPI launcher or Kubernetes says about this node
// (launcher/engine/, pure) becomes the options a user would have typed, before torchrun's checks
// run on them (resolve_options.h), so a detected job behaves exactly as the typed one.
//
// Explicit values (command line and PET_*) always win. A node count or node rank given
// explicitly that disagrees with the engine is refused in one line naming both values (exit 2);
// a given store address, port or run id simply replaces the engine's.
//
// What is filled, where not given (backend static unless --rdzv-backend says otherwise):
//   --nnodes N, --node-rank R, --rdzv-id <job id>
//   static: --master-addr <node 0's host> --master-port <derived port>; node rank 0 hosts the
//           store, the others connect to it
//   c10d:   --rdzv-endpoint <node 0's host>:<port> and is_host=<R == 0> in --rdzv-conf, so the
//           store's host is elected by rank, not guessed from addresses
// A one-node job gets only --nnodes and --rdzv-id: it runs as a single host.
//
// --spares=K (PET_SPARES; issue 24) keeps K of the engine's N hosts as hot spares: --nnodes
// becomes N-K:N-K and the backend c10d (a spare needs an elastic rendezvous), so that N-K hosts
// run and the others wait, joined, to take a lost host's slot. Refused in one line with an
// explicit --nnodes (it says how many run), with the static backend, when fewer than 2 hosts
// would run, and without
// an engine (then start the extra hosts with --nnodes=MIN:MAX yourself).

#include <string>
#include <vector>

#include "launcher/cli/resolve_options.h"
#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// Detects the engine chosen by --engine (PET_ENGINE; default auto) in `env` and completes `raw`.
// Appends to `notes` the one line saying what was detected and set ("Slurm step 1234.0: 4 nodes,
// this is node 2, rendezvous on gpu-001:22808"), or why nothing was. Throws ParseFailure
// (kRefused) for a contradiction, an engine that cannot be used, or a bad PET_ENGINE.
Engine ApplyEngine(RawValues& raw, const EnvMap& env, std::vector<std::string>& notes);

}  // namespace cpplaunch
