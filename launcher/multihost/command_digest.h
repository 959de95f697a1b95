#pragma once
// What every host of a job must agree on besides --nnodes: the command its workers run. Two
// jobs started with the same --rdzv-id (and an elastic --nnodes=1:2) would otherwise meet in
// one rendezvous and train together until gloo aborts; the rendezvous compares this digest
// (rendezvous_state.h) and refuses the second. Pure.

#include <string>

#include "launcher/cli/options.h"

namespace cpplaunch {

// 16 hex digits of SHA-256 over what the workers run: the script's or program's file name (or
// the module), -m, --no-python and --run-path. Not the directory it is in, not its arguments
// and not the interpreter: torchrun lets hosts differ in those (a per-host data path, Python
// and a checkout kept in different places), and a drop-in must too.
std::string CommandDigest(const LaunchOptions& options);

}  // namespace cpplaunch
