#pragma once
// What --hang-timeout changes in the workers it watches. Pure.
//
//   * PYTHONFAULTHANDLER=1 (unless the user set it): a Python worker then dumps every thread's
//     stack to stderr when the agent sends it SIGABRT after a hang;
//   * streams the worker would inherit from the agent go through the agent instead, written to
//     the console as they were (no prefix, no file), so that the agent counts their lines and
//     sees the dumps (with the rank's prefix when its other stream was already tee'd by -t, as
//     the two share one prefix). A pipe instead of the agent's terminal makes a Python worker's
//     stdout block-buffered, as under -t.

#include "launcher/job/worker_specs.h"

namespace cpplaunch {

void PrepareForHangWatch(WorkerSpec& spec);

}  // namespace cpplaunch
