#pragma once
// What --hang-timeout changes in the workers it watches. Pure.
//
//   * PYTHONFAULTHANDLER=1 (unless the user set it): a Python worker then dumps every thread's
//     stack to stderr when the agent sends it SIGABRT after a hang;
//   * streams the worker would inherit from the agent go through the agent instead
//     (RouteThroughAgent, worker_specs.h), so that the agent counts their lines and sees the
//     dumps.

#include "launcher/job/worker_specs.h"

namespace cpplaunch {

void PrepareForHangWatch(WorkerSpec& spec);

}  // namespace cpplaunch
