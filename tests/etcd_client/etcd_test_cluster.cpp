#include "tests/etcd_client/etcd_test_cluster.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

extern char** environ;

namespace cpplaunch::etcd::testing {
namespace {

std::string ReadLine(FILE* from) {
  std::string line;
  for (int c; (c = std::fgetc(from)) != EOF && c != '\n';) line += static_cast<char>(c);
  return line;
}

Endpoint ToEndpoint(const std::string& text) {
  size_t colon = text.rfind(':');
  return Endpoint{text.substr(0, colon), std::stoi(text.substr(colon + 1))};
}

}  // namespace

EtcdTestCluster::EtcdTestCluster(int members, bool with_tls) : tls(with_tls) {
  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2 failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  std::string count = std::to_string(members);
  std::vector<char*> argv = {const_cast<char*>("python3"), const_cast<char*>(ETCD_CLUSTER_SCRIPT),
                             const_cast<char*>("--members"), count.data()};
  if (tls) argv.push_back(const_cast<char*>("--tls"));
  argv.push_back(nullptr);
  int error = posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (error != 0) throw std::runtime_error("cannot run python3 " ETCD_CLUSTER_SCRIPT);
  to_script_ = ::fdopen(to_child[1], "w");
  from_script_ = ::fdopen(from_child[0], "r");
  std::string line = ReadLine(from_script_);
  auto state = nlohmann::json::parse(line, nullptr, false);
  if (state.is_discarded() || !state.is_object()) {
    throw std::runtime_error("etcd_cluster.py did not start a cluster: '" + line + "'");
  }
  if (state.contains("skip")) {
    std::printf("skipped: %s\n", state["skip"].get<std::string>().c_str());
    std::fflush(stdout);
    std::_Exit(77);
  }
  for (const auto& endpoint : state["endpoints"]) endpoints.push_back(ToEndpoint(endpoint));
  tls_files = TlsFiles{state["ca"], state["cert"], state["key"]};
}

EtcdTestCluster::~EtcdTestCluster() {
  if (to_script_) std::fclose(to_script_);  // end of input: the script cleans up and exits
  if (from_script_) std::fclose(from_script_);
  if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
}

void EtcdTestCluster::Command(const std::string& line) {
  std::fputs((line + "\n").c_str(), to_script_);
  std::fflush(to_script_);
  std::string answer = ReadLine(from_script_);
  if (answer != "ok") throw std::runtime_error("etcd_cluster.py " + line + ": " + answer);
}

void EtcdTestCluster::Stop(int i) { Command("stop " + std::to_string(i)); }
void EtcdTestCluster::Start(int i) { Command("start " + std::to_string(i)); }
void EtcdTestCluster::Freeze(int i) { Command("freeze " + std::to_string(i)); }
void EtcdTestCluster::Thaw(int i) { Command("thaw " + std::to_string(i)); }

ClientSettings EtcdTestCluster::Settings() const {
  ClientSettings settings;
  settings.endpoints = endpoints;
  settings.https = tls;
  if (tls) settings.tls = tls_files;
  return settings;
}

bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done,
              std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace cpplaunch::etcd::testing
