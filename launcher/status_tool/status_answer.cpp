#include "launcher/status_tool/status_answer.h"

namespace cpplaunch::status {
namespace {

using nlohmann::json;

const json& Field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto found = object.find(key);
  return found == object.end() ? kNull : *found;
}

std::optional<int64_t> Integer(const json& object, const char* key) {
  const json& value = Field(object, key);
  if (!value.is_number_integer()) return std::nullopt;
  return value.get<int64_t>();
}

// Ranks, group ranks and counts: an int, or null when out of range.
std::optional<int> SmallInteger(const json& object, const char* key) {
  std::optional<int64_t> value = Integer(object, key);
  if (!value || *value < INT32_MIN || *value > INT32_MAX) return std::nullopt;
  return static_cast<int>(*value);
}

std::optional<double> Number(const json& object, const char* key) {
  const json& value = Field(object, key);
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

std::string Text(const json& object, const char* key) {
  const json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

RankStatus ReadRank(const json& item) {
  RankStatus rank;
  rank.local_rank = SmallInteger(item, "local_rank");
  rank.rank = SmallInteger(item, "rank");
  rank.pid = Integer(item, "pid");
  rank.state = Text(item, "state");
  rank.started_at = Number(item, "started_at");
  rank.last_output_at = Number(item, "last_output_at");
  rank.last_output_age_seconds = Number(item, "last_output_age_seconds");
  if (std::optional<int64_t> rss = Integer(item, "rss_bytes"); rss && *rss >= 0) {
    rank.rss_bytes = static_cast<uint64_t>(*rss);
  }
  rank.cpu_share = Number(item, "cpu_share");
  return rank;
}

KnownHost ReadHost(const json& item) {
  const json& self = Field(item, "self");
  return KnownHost{SmallInteger(item, "group_rank"), Text(item, "hostname"),
                   Text(item, "status_address"), self.is_boolean() && self.get<bool>()};
}

std::optional<LastFailure> ReadFailure(const json& item) {
  if (!item.is_object()) return std::nullopt;
  return LastFailure{SmallInteger(item, "rank"), Text(item, "host"), Text(item, "reason")};
}

template <class Item, class Read>
std::vector<Item> ReadList(const json& list, Read read) {
  std::vector<Item> items;
  if (!list.is_array()) return items;
  for (const json& item : list) {
    if (item.is_object()) items.push_back(read(item));
  }
  return items;
}

}  // namespace

std::optional<StatusAnswer> ParseStatusAnswer(std::string_view body, std::string* error) {
  json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    *error = document.is_discarded() ? "not JSON" : "not a JSON object";
    return std::nullopt;
  }
  std::optional<int64_t> schema = Integer(document, "schema");
  if (schema != kStatusSchema) {
    *error = schema ? "schema " + std::to_string(*schema) + ", this tool reads " +
                          std::to_string(kStatusSchema)
                    : "no schema field: not a cpplaunch status answer";
    return std::nullopt;
  }
  const json& agent = Field(document, "agent");
  const json& host = Field(document, "host");
  StatusAnswer answer;
  answer.hostname = Text(agent, "hostname");
  answer.agent_pid = Integer(agent, "pid");
  answer.agent_state = Text(agent, "state");
  answer.status_address = Text(agent, "status_address");
  answer.group_rank = SmallInteger(host, "group_rank");
  answer.group_world_size = SmallInteger(host, "group_world_size");
  answer.restarts_used = SmallInteger(Field(document, "job"), "restarts_used");
  answer.ranks = ReadList<RankStatus>(Field(document, "ranks"), ReadRank);
  answer.last_failure = ReadFailure(Field(document, "last_failure"));
  answer.hosts = ReadList<KnownHost>(Field(document, "hosts"), ReadHost);
  answer.hosts_hidden = Text(document, "hosts_hidden");
  answer.document = std::move(document);
  return answer;
}

}  // namespace cpplaunch::status
