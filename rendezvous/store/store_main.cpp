// cpplaunch-store: the store server alone, for tests and benchmarks.
//   cpplaunch-store [--host H] [--port P] [--max-key-bytes N] [--max-value-bytes N]
//                   [--max-key-count N] [--max-request-bytes N] [--max-connections N]
//                   [--max-output-bytes N] [--max-store-bytes N] [--max-reply-bytes N]
//                   [--max-watches N] [--secret-file PATH] [--allowed-peers LIST]
//   cpplaunch-store --version
// --secret-file: the agents' shared secret (docs/security.md; the file's rules are
// base/secret_file.h's); --allowed-peers: CIDR blocks separated by ',' or ';'.
// Prints the bound port and a newline on stdout once listening, then serves until SIGTERM or
// SIGINT. Exit status: 0 after a signal, 2 for bad usage (an unusable secret file or list
// included), 1 when it cannot listen.

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "base/crypto/secret_file.h"
#include "base/exit_code.h"
#include "base/version.h"
#include "rendezvous/store/store_server.h"

namespace {

bool ParseNumber(std::string_view text, uint64_t* value) {
  // 19 digits always fit in a uint64_t, so the loop below cannot overflow.
  if (text.empty() || text.size() > 19) return false;
  uint64_t result = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    result = result * 10 + static_cast<uint64_t>(c - '0');
  }
  *value = result;
  return true;
}

// Fills *options from argv; returns an error message, empty on success.
std::string ParseArgs(int argc, char** argv, cpplaunch::StoreServerOptions* options) {
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    std::string_view value;
    if (auto eq = flag.find('='); eq != std::string_view::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return "missing value for " + std::string(flag);
    }
    if (flag == "--host") {
      options->bind_host = std::string(value);
      continue;
    }
    if (flag == "--secret-file") {
      cpplaunch::SecretFile file = cpplaunch::ReadSecretFile(std::string(value));
      if (!file.secret) return "--secret-file: " + file.error;
      options->secret = std::move(*file.secret);
      continue;
    }
    if (flag == "--allowed-peers") {
      std::string error;
      auto networks = cpplaunch::ParsePeerNetworks(value, &error);
      if (!networks) return "--allowed-peers: " + error;
      options->allowed_peers = std::move(*networks);
      continue;
    }
    uint64_t number = 0;
    if (!ParseNumber(value, &number)) return "bad number for " + std::string(flag);
    if (flag == "--port" && number <= 65535) {
      options->port = static_cast<uint16_t>(number);
    } else if (flag == "--max-key-bytes") {
      options->limits.max_key_bytes = number;
    } else if (flag == "--max-value-bytes") {
      options->limits.max_value_bytes = number;
    } else if (flag == "--max-key-count") {
      options->limits.max_key_count = number;
    } else if (flag == "--max-request-bytes") {
      options->limits.max_request_bytes = number;
    } else if (flag == "--max-connections") {
      options->max_connections = number;
    } else if (flag == "--max-output-bytes") {
      options->max_output_bytes = number;
    } else if (flag == "--max-store-bytes") {
      options->budget.total_bytes = number;
    } else if (flag == "--max-reply-bytes") {
      options->budget.max_reply_bytes = number;
    } else if (flag == "--max-watches") {
      options->budget.max_watches_per_connection = number;
    } else {
      return "unknown option or bad value: " + std::string(flag);
    }
  }
  return {};
}

// The server's life; main() turns what it throws into one line and an exit status.
int Run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--version") {
      std::cout << cpplaunch::VersionLine("cpplaunch-store");
      return cpplaunch::ProcessExitCode(cpplaunch::ExitCode::kSuccess);
    }
  }
  cpplaunch::StoreServerOptions options;
  options.port = 0;  // a free port by default: the caller reads it from stdout
  options.report = [](const std::string& line) {
    std::cerr << "cpplaunch-store: " << line << "\n";
  };
  if (std::string error = ParseArgs(argc, argv, &options); !error.empty()) {
    std::cerr << "cpplaunch-store: " << error << "\n";
    return cpplaunch::ProcessExitCode(cpplaunch::ExitCode::kUsage);
  }
  // A write to a client that has gone must fail with EPIPE, not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io(1);
  cpplaunch::StoreServer server(io, options);
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code&, int) {
    server.Stop();
    io.stop();
  });
  // Flushed at once: stdout is a pipe to the parent, and block buffering would hold the
  // port back while the server runs.
  std::cout << server.port() << std::endl;
  io.run();
  return cpplaunch::ProcessExitCode(cpplaunch::ExitCode::kSuccess);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& error) {
    // StoreBindError (address in use, bad host) and anything else the loop throws: one line,
    // never an uncaught exception's abort.
    std::cerr << "cpplaunch-store: " << error.what() << "\n";
    return cpplaunch::ProcessExitCode(cpplaunch::ExitCode::kFailure);
  }
}
