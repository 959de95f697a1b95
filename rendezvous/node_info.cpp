#include "rendezvous/node_info.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <vector>

namespace cpplaunch {
namespace {

using Fields = std::map<std::string, std::string, std::less<>>;

void Line(std::string* out, const char* key, std::string value) {
  std::replace(value.begin(), value.end(), '\n', ' ');
  *out += key;
  *out += '=';
  *out += value;
  *out += '\n';
}

std::optional<Fields> ParseLines(std::string_view text, std::string* error) {
  Fields fields;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      *error = "store value line without '=': " + std::string(line.substr(0, 40));
      return std::nullopt;
    }
    fields[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
  }
  return fields;
}

bool GetInt(const Fields& fields, const char* key, int* out, std::string* error) {
  auto it = fields.find(key);
  if (it == fields.end()) {
    *error = std::string("store value is missing '") + key + "'";
    return false;
  }
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (ec != std::errc() || end != text.data() + text.size()) {
    *error = std::string("store value field '") + key + "' is not an integer";
    return false;
  }
  return true;
}

std::string GetText(const Fields& fields, const char* key) {
  auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

const char* KindName(RoundEndKind kind) {
  switch (kind) {
    case RoundEndKind::kWorkerFailure: return "worker_failure";
    case RoundEndKind::kAgentStopped: return "agent_stopped";
    case RoundEndKind::kPeerLost: return "peer_lost";
    case RoundEndKind::kMembershipChange: return "membership_change";
    case RoundEndKind::kConfigError: return "config_error";
    case RoundEndKind::kStoreLost: return "store_lost";
  }
  return "unknown";
}

std::optional<RoundEndKind> KindFromName(std::string_view name) {
  for (auto kind : {RoundEndKind::kWorkerFailure, RoundEndKind::kAgentStopped,
                    RoundEndKind::kPeerLost, RoundEndKind::kMembershipChange,
                    RoundEndKind::kConfigError, RoundEndKind::kStoreLost}) {
    if (name == KindName(kind)) return kind;
  }
  return std::nullopt;
}

}  // namespace

std::string NodeInfo::Label() const {
  if (hostname.empty()) return addr;
  if (addr.empty() || addr == hostname) return hostname;
  return hostname + " at " + addr;
}

std::string NodeInfo::Encode() const {
  std::string out;
  Line(&out, "node_id", node_id);
  Line(&out, "addr", addr);
  Line(&out, "hostname", hostname);
  Line(&out, "local_world_size", std::to_string(local_world_size));
  Line(&out, "nnodes_min", std::to_string(nnodes_min));
  Line(&out, "nnodes_max", std::to_string(nnodes_max));
  Line(&out, "max_restarts", std::to_string(max_restarts));
  return out;
}

std::optional<NodeInfo> NodeInfo::Decode(std::string_view text, std::string* error) {
  auto fields = ParseLines(text, error);
  if (!fields) return std::nullopt;
  NodeInfo info;
  info.node_id = GetText(*fields, "node_id");
  info.addr = GetText(*fields, "addr");
  info.hostname = GetText(*fields, "hostname");
  if (info.node_id.empty()) {
    *error = "node info without a node_id";
    return std::nullopt;
  }
  if (!GetInt(*fields, "local_world_size", &info.local_world_size, error) ||
      !GetInt(*fields, "nnodes_min", &info.nnodes_min, error) ||
      !GetInt(*fields, "nnodes_max", &info.nnodes_max, error) ||
      !GetInt(*fields, "max_restarts", &info.max_restarts, error)) {
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
      return "worker rank " + std::to_string(rank) + " (local rank " +
             std::to_string(local_rank) + ") on " + place + " failed: " + detail;
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
  }
  return detail;
}

std::string RoundEnd::Encode() const {
  std::string out;
  Line(&out, "kind", KindName(kind));
  Line(&out, "host", host);
  Line(&out, "addr", addr);
  Line(&out, "node_rank", std::to_string(node_rank));
  Line(&out, "rank", std::to_string(rank));
  Line(&out, "local_rank", std::to_string(local_rank));
  Line(&out, "detail", detail);
  return out;
}

std::optional<RoundEnd> RoundEnd::Decode(std::string_view text, std::string* error) {
  auto fields = ParseLines(text, error);
  if (!fields) return std::nullopt;
  auto kind = KindFromName(GetText(*fields, "kind"));
  if (!kind) {
    *error = "round-end notice of unknown kind '" + GetText(*fields, "kind") + "'";
    return std::nullopt;
  }
  RoundEnd end;
  end.kind = *kind;
  end.host = GetText(*fields, "host");
  end.addr = GetText(*fields, "addr");
  end.detail = GetText(*fields, "detail");
  if (!GetInt(*fields, "node_rank", &end.node_rank, error) ||
      !GetInt(*fields, "rank", &end.rank, error) ||
      !GetInt(*fields, "local_rank", &end.local_rank, error)) {
    return std::nullopt;
  }
  return end;
}

}  // namespace cpplaunch
