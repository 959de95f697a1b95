#include "launcher/multihost/port_holder.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "base/text.h"

namespace cpplaunch {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// "0100007F:7530" (or a 32-digit IPv6 address): the port after the colon, in hex.
std::optional<int> HexPort(std::string_view address) {
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  int port = 0;
  const char* first = address.data() + colon + 1;
  const char* last = address.data() + address.size();
  auto [end, error] = std::from_chars(first, last, port, 16);
  if (error != std::errc() || end != last) return std::nullopt;
  return port;
}

}  // namespace

std::vector<uint64_t> ListeningSocketInodes(std::string_view proc_net_tcp, int port) {
  // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout
  //  inode": fields 1 (local address), 3 (state) and 9 (inode).
  constexpr std::string_view kListen = "0A";
  std::vector<uint64_t> inodes;
  std::istringstream lines{std::string(proc_net_tcp)};
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f{std::istream_iterator<std::string>(fields),
                               std::istream_iterator<std::string>()};
    if (f.size() < 10 || f[3] != kListen || HexPort(f[1]) != port) continue;
    uint64_t inode = 0;
    auto [end, error] = std::from_chars(f[9].data(), f[9].data() + f[9].size(), inode);
    if (error == std::errc() && end == f[9].data() + f[9].size() && inode != 0) {
      inodes.push_back(inode);
    }
  }
  return inodes;
}

std::optional<std::string> FindPortHolder(int port) {
  std::vector<std::string> wanted;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    for (uint64_t inode : ListeningSocketInodes(ReadAll(table), port)) {
      wanted.push_back("socket:[" + std::to_string(inode) + "]");
    }
  }
  if (wanted.empty()) return std::nullopt;
  std::error_code ec;
  for (const auto& process : fs::directory_iterator("/proc", ec)) {
    const std::string pid = process.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fd_error;
    for (const auto& fd : fs::directory_iterator(process.path() / "fd", fd_error)) {
      std::error_code link_error;
      const std::string target = fs::read_symlink(fd.path(), link_error).string();
      if (link_error) continue;
      for (const std::string& socket : wanted) {
        if (target != socket) continue;
        const std::string comm = ReadAll(process.path() / "comm");
        const std::string name(Strip(comm));
        return "pid " + pid + (name.empty() ? "" : " (" + name + ")");
      }
    }
  }
  return std::nullopt;
}

std::string BusyStorePortRefusal(const std::string& endpoint,
                                 const std::optional<std::string>& holder) {
  const std::string who =
      holder ? *holder
             : "a process this agent cannot see in /proc (another user's, or another network "
               "namespace's)";
  return "cannot serve the job's store on " + endpoint + ": the port is held by " + who +
         "; with a secret_file an agent on the endpoint's host does not join whatever holds the "
         "port: stop that process, or give --rdzv-conf is_host=0 to the agents that should join "
         "another agent's store there (docs/security.md)";
}

}  // namespace cpplaunch
