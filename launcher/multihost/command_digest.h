#pragma once
// What every host of a job must agree on besides --nnodes: the command its workers run. Two
// jobs started with the same --rdzv-id (and an elastic --nnodes=1:2) would otherwise meet in
// one rendezvous and train together until gloo aborts; the rendezvous compares this digest
// (rendezvous_state.h) and refuses the second. Pure.

#include <string>

#include "launcher/cli/options.h"

namespace cpplaunch {

// 16 hex digits of SHA-256 over the worker command as typed: the script or module, -m,
// --no-python, --run-path and each argument. Not the interpreter: hosts may keep Python in
// different places.
std::string CommandDigest(const LaunchOptions& options);

}  // namespace cpplaunch
