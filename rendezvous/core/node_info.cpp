#include "rendezvous/core/node_info.h"

#include <vector>

#include "rendezvous/core/record_limits.h"
#include "rendezvous/core/text_record.h"

namespace cpplaunch {
namespace {

// Names both records in decoding errors.
constexpr std::string_view kWhat = "store value";

// Kinds travel by name, not by number, so that adding or reordering kinds cannot make an agent
// of another build misread a notice; an unknown name is refused.
const char* KindName(RoundEndKind kind) {
  switch (kind) {
    case RoundEndKind::kWorkerFailure:
      return "worker_failure";
    case RoundEndKind::kAgentStopped:
      return "agent_stopped";
    case RoundEndKind::kPeerLost:
      return "peer_lost";
    case RoundEndKind::kMembershipChange:
      return "membership_change";
    case RoundEndKind::kConfigError:
      return "config_error";
    case RoundEndKind::kStoreLost:
      return "store_lost";
    case RoundEndKind::kMemberDropped:
      return "member_dropped";
    case RoundEndKind::kForeignEnd:
      return "foreign_end";
  }
  return "unknown";
}

std::optional<RoundEndKind> KindFromName(std::string_view name) {
  for (auto kind :
       {RoundEndKind::kWorkerFailure, RoundEndKind::kAgentStopped, RoundEndKind::kPeerLost,
        RoundEndKind::kMembershipChange, RoundEndKind::kConfigError, RoundEndKind::kStoreLost,
        RoundEndKind::kMemberDropped, RoundEndKind::kForeignEnd}) {
    if (name == KindName(kind)) return kind;
  }
  return std::nullopt;
}

}  // namespace

std::string NnodesText(int min_nodes, int max_nodes) {
  if (min_nodes == max_nodes) return std::to_string(min_nodes);
  return std::to_string(min_nodes) + ":" + std::to_string(max_nodes);
}

std::string NodeInfo::Label() const {
  if (hostname.empty()) return addr;
  if (addr.empty() || addr == hostname) return hostname;
  return hostname + " at " + addr;
}

std::string NodeInfo::Encode() const {
  TextRecordBuilder out;
  out.Add("node_id", node_id)
      .Add("addr", addr)
      .Add("hostname", hostname)
      .AddInt("local_world_size", local_world_size)
      .AddInt("nnodes_min", nnodes_min)
      .AddInt("nnodes_max", nnodes_max)
      .AddInt("max_restarts", max_restarts);
  if (worker_store_port != 0) out.AddInt("worker_store_port", worker_store_port);
  if (!status.empty()) out.Add("status", status);
  return out.text();
}

std::optional<NodeInfo> NodeInfo::Decode(std::string_view text, std::string* error) {
  namespace limits = record_limits;
  auto fields = TextRecord::Parse(text, kWhat, error);
  if (!fields) return std::nullopt;
  NodeInfo info;
  if (!fields->GetText("node_id", limits::kMaxNodeIdBytes, &info.node_id, error) ||
      !fields->GetText("addr", limits::kMaxAddrBytes, &info.addr, error) ||
      !fields->GetText("hostname", limits::kMaxHostnameBytes, &info.hostname, error)) {
    return std::nullopt;
  }
  // The names are for messages and may be empty; node_id keys the dynamic rendezvous and the
  // heartbeats and tells two hosts with one --node-rank apart, so it is required. It travels in
  // the rendezvous state's comma-separated lists, so it cannot hold a comma.
  if (info.node_id.empty()) {
    *error = "node info without a node_id";
    return std::nullopt;
  }
  if (info.node_id.find(',') != std::string::npos) {
    *error = "node info with a ',' in its node_id";
    return std::nullopt;
  }
  // Bounded so that the world size, a sum over every node, cannot overflow on the way to its
  // own check (ComputeRankLayout refuses a sum above INT32_MAX).
  if (!fields->GetIntIn("local_world_size", 1, limits::kMaxLocalWorldSize, &info.local_world_size,
                        error) ||
      !fields->GetIntIn("nnodes_min", 1, limits::kMaxNodes, &info.nnodes_min, error) ||
      !fields->GetIntIn("nnodes_max", info.nnodes_min, limits::kMaxNodes, &info.nnodes_max,
                        error) ||
      !fields->GetIntIn("max_restarts", 0, limits::kMaxCount, &info.max_restarts, error)) {
    return std::nullopt;
  }
  if (!fields->Text("worker_store_port").empty() &&
      !fields->GetIntIn("worker_store_port", 1, 65535, &info.worker_store_port, error)) {
    return std::nullopt;
  }
  // An address and ":port" (IPv6 in brackets).
  if (!fields->Text("status").empty() &&
      !fields->GetText("status", limits::kMaxAddrBytes + 8, &info.status, error)) {
    return std::nullopt;
  }
  return info;
}

std::string RoundEnd::Describe() const {
  // "host-b (10.0.0.2, node rank 1)"
  std::vector<std::string> details;
  if (!addr.empty() && addr != host) details.push_back(addr);
  if (node_rank >= 0) details.push_back("node rank " + std::to_string(node_rank));
  std::string place = host.empty() ? std::string("an unnamed host") : host;
  if (host.empty() && !details.empty()) {
    place = details.front();
    details.erase(details.begin());
  }
  for (size_t i = 0; i < details.size(); ++i) {
    place += (i == 0 ? " (" : ", ") + details[i] + (i + 1 == details.size() ? ")" : "");
  }
  switch (kind) {
    case RoundEndKind::kWorkerFailure:
      return "worker rank " + std::to_string(rank) + " (local rank " + std::to_string(local_rank) +
             ") on " + place + " failed: " + detail;
    case RoundEndKind::kAgentStopped:
      return "the agent on " + place + " stopped: " + detail;
    case RoundEndKind::kPeerLost:
      return "lost the agent on " + place + ": " + detail;
    case RoundEndKind::kMembershipChange:
      return "host " + place + " asks to join the job (" + detail + ")";
    case RoundEndKind::kConfigError:
      return "hosts disagree about the job (reported by " + place + "): " + detail;
    case RoundEndKind::kStoreLost:
      return "lost the rendezvous store: " + detail;
    case RoundEndKind::kMemberDropped:
      return "dropped " + place + " from the round before its workers started: " + detail;
    case RoundEndKind::kForeignEnd:
      return "the round was ended by a client that is not one of this job's agents: " + detail;
  }
  return detail;
}

std::string RoundEnd::Encode() const {
  TextRecordBuilder out;
  out.Add("kind", KindName(kind))
      .Add("host", host)
      .Add("addr", addr)
      .AddInt("node_rank", node_rank)
      .AddInt("rank", rank)
      .AddInt("local_rank", local_rank)
      // Cut to what Decode accepts, so that a long message never makes this notice unreadable.
      .Add("detail", std::string_view(detail).substr(0, record_limits::kMaxDetailBytes));
  return out.text();
}

std::optional<RoundEnd> RoundEnd::Decode(std::string_view text, std::string* error) {
  namespace limits = record_limits;
  auto fields = TextRecord::Parse(text, kWhat, error);
  if (!fields) return std::nullopt;
  auto kind = KindFromName(fields->Text("kind"));
  if (!kind) {
    *error = "round-end notice of unknown kind '" + fields->Text("kind").substr(0, 40) + "'";
    return std::nullopt;
  }
  RoundEnd end;
  end.kind = *kind;
  // -1 means "none" for each rank.
  if (!fields->GetText("host", limits::kMaxHostnameBytes, &end.host, error) ||
      !fields->GetText("addr", limits::kMaxAddrBytes, &end.addr, error) ||
      !fields->GetText("detail", limits::kMaxDetailBytes, &end.detail, error) ||
      !fields->GetIntIn("node_rank", -1, limits::kMaxNodes - 1, &end.node_rank, error) ||
      !fields->GetIntIn("rank", -1, limits::kMaxCount - 1, &end.rank, error) ||
      !fields->GetIntIn("local_rank", -1, limits::kMaxLocalWorldSize - 1, &end.local_rank, error)) {
    return std::nullopt;
  }
  return end;
}

}  // namespace cpplaunch
