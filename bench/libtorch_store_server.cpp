// The reference server for the store benchmarks: LibTorch 1.13's own c10d::TCPStore, hosted the
// way a PyTorch job hosts it (isServer=true, no worker count, no waiting for workers).
//
// Usage: libtorch_store_server [--port P]     (P = 0, the default, lets the kernel choose)
// Prints the listening port on one line of stdout, then serves until SIGTERM or SIGINT.
//
// The TCPStore object also opens its own two client connections to the server (main and
// callback socket), exactly as it does inside a PyTorch rank 0; the benchmarks' clients come on
// top of those.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace {

std::uint16_t ParsePort(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      const long port = std::strtol(argv[i + 1], nullptr, 10);
      if (port < 0 || port > 65535) {
        std::fprintf(stderr, "libtorch_store_server: bad port %s\n", argv[i + 1]);
        std::exit(2);
      }
      return static_cast<std::uint16_t>(port);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Block the stop signals before TCPStore starts its threads, so that they inherit the mask and
  // only sigwait below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::unique_ptr<c10d::TCPStore> store;
  try {
    c10d::TCPStoreOptions opts;
    opts.port = ParsePort(argc, argv);
    opts.isServer = true;
    opts.waitWorkers = false;
    opts.numWorkers = c10::nullopt;
    opts.multiTenant = false;
    store = std::make_unique<c10d::TCPStore>("127.0.0.1", opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_store_server: %s\n", e.what());
    return 1;
  }
  std::printf("%u\n", static_cast<unsigned>(store->getPort()));
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop, &signal_number);
  return 0;
}
