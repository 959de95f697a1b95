#include "rendezvous/core/join_queue.h"

#include <charconv>

#include "base/text.h"
#include "rendezvous/core/record_limits.h"
#include "rendezvous/core/segments.h"

namespace cpplaunch {
namespace {

bool ToInt(std::string_view text, int64_t min, int64_t max, int64_t* out) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return false;
  }
  *out = value;
  return true;
}

std::optional<QueuedJoin> ParseLine(std::string_view line) {
  const std::vector<std::string_view> f = Split(line, ',');
  // Optional trailing fields: the 8th, the lost seat (-1: none), is written when there is one or
  // when a 9th, the command digest, follows; the 10th to 12th (the failed seat, quarantine_after,
  // the segment) come together, when the request names a failed seat or a segment.
  if (f.size() < 7 || f.size() > 12 || f.size() == 10 || f.size() == 11 || f[0].empty() ||
      f[0].size() > record_limits::kMaxNodeIdBytes ||
      (f.size() >= 9 && f[8].size() > record_limits::kMaxCommandDigestBytes)) {
    return std::nullopt;
  }
  int64_t attempt, min_nodes, max_nodes, last_call, min_round, restart, lost_seat = -1;
  int64_t failed_seat = -1, quarantine_after = JoinRequest{}.quarantine_after;
  namespace limits = record_limits;
  if (!ToInt(f[1], 0, INT64_MAX, &attempt) || !ToInt(f[2], 1, limits::kMaxNodes, &min_nodes) ||
      !ToInt(f[3], min_nodes, limits::kMaxNodes, &max_nodes) ||
      !ToInt(f[4], 0, INT64_MAX / 2, &last_call) ||
      !ToInt(f[5], 0, limits::kMaxCount, &min_round) ||
      !ToInt(f[6], 0, limits::kMaxCount, &restart) ||
      (f.size() >= 8 && !ToInt(f[7], -1, limits::kMaxNodes - 1, &lost_seat)) ||
      (f.size() == 12 && (!ToInt(f[9], -1, limits::kMaxNodes - 1, &failed_seat) ||
                          !ToInt(f[10], 0, limits::kMaxCount, &quarantine_after) ||
                          (!f[11].empty() && !IsSegmentName(f[11]))))) {
    return std::nullopt;
  }
  QueuedJoin join;
  join.attempt = attempt;
  join.request.node_id = std::string(f[0]);
  join.request.min_nodes = static_cast<int>(min_nodes);
  join.request.max_nodes = static_cast<int>(max_nodes);
  join.request.last_call_timeout = std::chrono::milliseconds(last_call);
  join.request.min_round = min_round;
  join.request.restart_count = static_cast<int>(restart);
  join.request.lost_seat = static_cast<int>(lost_seat);
  if (f.size() >= 9) join.request.command_digest = std::string(f[8]);
  join.request.failed_seat = static_cast<int>(failed_seat);
  join.request.quarantine_after = static_cast<int>(quarantine_after);
  if (f.size() == 12) join.request.segment = std::string(f[11]);
  return join;
}

}  // namespace

std::string EncodeJoinLine(const QueuedJoin& join) {
  const JoinRequest& r = join.request;
  std::string line = r.node_id + "," + std::to_string(join.attempt) + "," +
                     std::to_string(r.min_nodes) + "," + std::to_string(r.max_nodes) + "," +
                     std::to_string(r.last_call_timeout.count()) + "," +
                     std::to_string(r.min_round) + "," + std::to_string(r.restart_count);
  // The optional fields, as few as say the request (see the header).
  if (r.failed_seat >= 0 || !r.segment.empty()) {
    line += "," + std::to_string(r.lost_seat) + "," + r.command_digest + "," +
            std::to_string(r.failed_seat) + "," + std::to_string(r.quarantine_after) + "," +
            r.segment;
  } else if (!r.command_digest.empty()) {
    line += "," + std::to_string(r.lost_seat) + "," + r.command_digest;
  } else if (r.lost_seat >= 0) {
    line += "," + std::to_string(r.lost_seat);
  }
  return line + "\n";
}

std::optional<std::vector<QueuedJoin>> ParseJoinQueue(std::string_view queue, int64_t skip,
                                                      std::string* error) {
  std::vector<QueuedJoin> joins;
  int64_t index = 0;
  size_t at = 0;
  for (size_t end; (end = queue.find('\n', at)) != std::string_view::npos; at = end + 1, ++index) {
    if (index < skip) continue;
    const std::string_view line = queue.substr(at, end - at);
    auto join = ParseLine(line);
    if (!join) {
      *error = "join queue line " + std::to_string(index + 1) +
               " is not a join request: " + std::string(line.substr(0, 60));
      return std::nullopt;
    }
    joins.push_back(std::move(*join));
  }
  return joins;
}

std::string EncodeJoinAnswer(const JoinAnswer& answer) {
  if (!answer.admitted) return "decide";
  return "participant " + std::to_string(answer.round) + " " + std::to_string(answer.epoch) + " " +
         std::to_string(answer.last_call_deadline_ms);
}

std::optional<JoinAnswer> ParseJoinAnswer(std::string_view text) {
  if (text == "decide") return JoinAnswer{};
  const std::vector<std::string_view> f = Split(text, ' ');
  JoinAnswer answer;
  answer.admitted = true;
  if (f.size() != 4 || f[0] != "participant" || !ToInt(f[1], 0, INT64_MAX, &answer.round) ||
      !ToInt(f[2], 0, INT64_MAX, &answer.epoch) ||
      !ToInt(f[3], 0, INT64_MAX, &answer.last_call_deadline_ms)) {
    return std::nullopt;
  }
  return answer;
}

}  // namespace cpplaunch
