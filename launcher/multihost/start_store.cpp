#include "launcher/multihost/start_store.h"

#include <algorithm>
#include <cstdint>

#include "base/text.h"
#include "launcher/process/posix_sys.h"

namespace cpplaunch {
namespace {

// Below this the job's own keys (a few KiB per worker) and replies might not fit.
constexpr uint64_t kMinStoreBytes = uint64_t{16} << 20;

// "1073741824", "512M", "2G", "2GiB", "64k" -> bytes; nullopt when malformed or too large.
std::optional<uint64_t> ParseByteCount(std::string_view text) {
  size_t digits = 0;
  uint64_t value = 0;
  for (; digits < text.size() && text[digits] >= '0' && text[digits] <= '9'; ++digits) {
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[digits] - '0');
  }
  if (digits == 0) return std::nullopt;
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  int shift = 0;
  if (unit == "K") {
    shift = 10;
  } else if (unit == "M") {
    shift = 20;
  } else if (unit == "G") {
    shift = 30;
  } else if (unit == "T") {
    shift = 40;
  } else if (!unit.empty() && unit != "B") {
    return std::nullopt;
  }
  if (value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

}  // namespace

std::optional<BudgetLimits> StoreBudgetFromConf(const RdzvConfig& conf, std::string* error) {
  BudgetLimits limits;
  auto text = conf.Get("store_max_bytes");
  if (!text) return limits;
  auto bytes = ParseByteCount(*text);
  if (!bytes || *bytes < kMinStoreBytes) {
    *error =
        "The rendezvous configuration option 'store_max_bytes' must be a byte count of at "
        "least 16M (for example 1073741824, 512M or 2G), not '" +
        *text + "'";
    return std::nullopt;
  }
  limits.total_bytes = *bytes;
  return limits;
}

std::size_t StoreConnectionCap(uint64_t fd_limit, int nproc_per_node) {
  const uint64_t workers = nproc_per_node > 0 ? static_cast<uint64_t>(nproc_per_node) : 0;
  const uint64_t reserve = kFileReserveBase + kFileReservePerWorker * workers;
  if (fd_limit <= reserve) return 1;
  return static_cast<std::size_t>(std::min(kMaxStoreConnections, fd_limit - reserve));
}

std::unique_ptr<StoreServer> StartStore(boost::asio::io_context& io, const std::string& addr,
                                        int port, bool port_was_chosen,
                                        const std::function<void(const std::string&)>& say,
                                        int nproc_per_node, const StoreSecurity& security) {
  StoreServerOptions options;
  options.bind_host = addr;
  options.port = static_cast<uint16_t>(port);
  options.max_connections = StoreConnectionCap(posix::CurrentFileLimit().soft, nproc_per_node);
  options.secret = security.secret;
  options.allowed_peers = security.allowed_peers;
  options.budget = security.budget;
  options.report = say;
  try {
    return std::make_unique<StoreServer>(io, options);
  } catch (const StoreBindError& e) {
    // torchrun's default port 29500 is a frequent collision between jobs on one host; a port
    // the user did not pick is not worth failing the job for.
    if (port_was_chosen || port == 0 || !e.address_in_use()) throw;
  }
  options.port = 0;
  auto store = std::make_unique<StoreServer>(io, options);
  say("port " + std::to_string(port) + " is busy; the store listens on port " +
      std::to_string(store->port()) + " instead (use --master-port to choose)");
  return store;
}

}  // namespace cpplaunch
