#include "etcd_client/etcd_json.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "base/crypto/base64.h"
#include "etcd_client/etcd_error.h"

namespace cpplaunch::etcd::json {
namespace {

using nlohmann::json;

[[noreturn]] void Malformed(const std::string& what) {
  throw EtcdError(EtcdError::Kind::kMalformed, "malformed answer from etcd: " + what);
}

json Parse(std::string_view body) {
  json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    Malformed("not a JSON object: " + ErrorMessage(body));
  }
  return document;
}

// The gateway writes 64-bit integers as strings and accepts numbers; a missing field is 0.
int64_t Int(const json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  Malformed(std::string("field '") + name + "' is not an integer");
}

bool Bool(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string String(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string Bytes(const json& object, const char* name) {
  auto decoded = Base64Decode(String(object, name));
  if (!decoded) Malformed(std::string("field '") + name + "' is not base64");
  return *decoded;
}

const json& Object(const json& object, const char* name) {
  static const json kEmpty = json::object();
  auto it = object.find(name);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

const json& Array(const json& object, const char* name) {
  static const json kEmpty = json::array();
  auto it = object.find(name);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

int64_t HeaderRevision(const json& answer) { return Int(Object(answer, "header"), "revision"); }

KeyValue ToKeyValue(const json& object) {
  KeyValue kv;
  kv.key = Bytes(object, "key");
  kv.value = Bytes(object, "value");
  kv.create_revision = Int(object, "create_revision");
  kv.mod_revision = Int(object, "mod_revision");
  kv.version = Int(object, "version");
  kv.lease = Int(object, "lease");
  return kv;
}

RangeResult ToRange(const json& answer) {
  RangeResult result;
  result.revision = HeaderRevision(answer);
  result.count = Int(answer, "count");
  for (const json& kv : Array(answer, "kvs")) result.kvs.push_back(ToKeyValue(kv));
  return result;
}

// A key (and range end) in the form range, deleterange and watch share.
json KeyRange(std::string_view key, std::string_view range_end) {
  json object = {{"key", Base64Encode(key)}};
  if (!range_end.empty()) object["range_end"] = Base64Encode(range_end);
  return object;
}

json PutBody(std::string_view key, std::string_view value, int64_t lease) {
  json object = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  if (lease != 0) object["lease"] = std::to_string(lease);
  return object;
}

const char* TargetName(Compare::Target target) {
  switch (target) {
    case Compare::Target::kVersion:
      return "VERSION";
    case Compare::Target::kCreate:
      return "CREATE";
    case Compare::Target::kMod:
      return "MOD";
    case Compare::Target::kValue:
      return "VALUE";
  }
  return "MOD";
}

const char* OpName(Compare::Op op) {
  switch (op) {
    case Compare::Op::kEqual:
      return "EQUAL";
    case Compare::Op::kNotEqual:
      return "NOT_EQUAL";
    case Compare::Op::kGreater:
      return "GREATER";
    case Compare::Op::kLess:
      return "LESS";
  }
  return "EQUAL";
}

json CompareBody(const Compare& compare) {
  json object = {{"target", TargetName(compare.target)},
                 {"result", OpName(compare.op)},
                 {"key", Base64Encode(compare.key)}};
  std::string number = std::to_string(compare.number);
  switch (compare.target) {
    case Compare::Target::kVersion:
      object["version"] = number;
      break;
    case Compare::Target::kCreate:
      object["create_revision"] = number;
      break;
    case Compare::Target::kMod:
      object["mod_revision"] = number;
      break;
    case Compare::Target::kValue:
      object["value"] = Base64Encode(compare.value);
      break;
  }
  return object;
}

json OpBody(const TxnOp& op) {
  switch (op.kind) {
    case TxnOp::Kind::kPut:
      return {{"request_put", PutBody(op.key, op.value, op.lease)}};
    case TxnOp::Kind::kRange:
      return {{"request_range", KeyRange(op.key, op.range_end)}};
    case TxnOp::Kind::kDelete:
      return {{"request_delete_range", KeyRange(op.key, op.range_end)}};
  }
  return json::object();
}

json OpsBody(const std::vector<TxnOp>& ops) {
  json array = json::array();
  for (const TxnOp& op : ops) array.push_back(OpBody(op));
  return array;
}

WatchEvent ToEvent(const json& object) {
  WatchEvent event;
  // PUT is the enum's zero and so absent; the gateway may also write enums as numbers.
  auto type = object.find("type");
  bool del = type != object.end() &&
             ((type->is_string() && *type == "DELETE") || (type->is_number() && *type == 1));
  event.kind = del ? WatchEvent::kDelete : WatchEvent::kPut;
  event.kv = ToKeyValue(Object(object, "kv"));
  return event;
}

}  // namespace

std::string RangeRequest(std::string_view key, std::string_view range_end) {
  return KeyRange(key, range_end).dump();
}

std::string PutRequest(std::string_view key, std::string_view value, int64_t lease) {
  return PutBody(key, value, lease).dump();
}

std::string DeleteRequest(std::string_view key, std::string_view range_end) {
  return KeyRange(key, range_end).dump();
}

std::string TxnRequest(const std::vector<Compare>& compare, const std::vector<TxnOp>& success,
                       const std::vector<TxnOp>& failure) {
  json compares = json::array();
  for (const Compare& c : compare) compares.push_back(CompareBody(c));
  return json{{"compare", compares}, {"success", OpsBody(success)}, {"failure", OpsBody(failure)}}
      .dump();
}

std::string LeaseGrantRequest(std::chrono::seconds ttl) {
  return json{{"TTL", std::to_string(ttl.count())}}.dump();
}

std::string LeaseRequest(int64_t lease) { return json{{"ID", std::to_string(lease)}}.dump(); }

std::string CompactRequest(int64_t revision) {
  return json{{"revision", std::to_string(revision)}, {"physical", true}}.dump();
}

std::string WatchCreateRequest(std::string_view key, std::string_view range_end,
                               int64_t start_revision) {
  json create = KeyRange(key, range_end);
  if (start_revision > 0) create["start_revision"] = std::to_string(start_revision);
  return json{{"create_request", create}}.dump();
}

RangeResult ParseRange(std::string_view body) { return ToRange(Parse(body)); }

int64_t ParsePut(std::string_view body) { return HeaderRevision(Parse(body)); }

int64_t ParseDelete(std::string_view body) { return Int(Parse(body), "deleted"); }

TxnResult ParseTxn(std::string_view body) {
  json answer = Parse(body);
  TxnResult result;
  result.succeeded = Bool(answer, "succeeded");
  result.revision = HeaderRevision(answer);
  for (const json& response : Array(answer, "responses")) {
    auto range = response.find("response_range");
    if (range != response.end() && range->is_object()) result.ranges.push_back(ToRange(*range));
  }
  return result;
}

LeaseGrant ParseLeaseGrant(std::string_view body) {
  json answer = Parse(body);
  if (std::string error = String(answer, "error"); !error.empty()) {
    Malformed("lease grant refused: " + error);
  }
  LeaseGrant grant{Int(answer, "ID"), std::chrono::seconds(Int(answer, "TTL"))};
  if (grant.id == 0) Malformed("lease grant without an ID");
  return grant;
}

std::chrono::seconds ParseKeepAlive(std::string_view body) {
  // A one-message streaming call: the message comes wrapped in "result".
  json answer = Parse(body);
  const json& result = answer.contains("result") ? Object(answer, "result") : answer;
  return std::chrono::seconds(Int(result, "TTL"));
}

WatchMessage ParseWatchMessage(std::string_view line) {
  json document = Parse(line);
  WatchMessage message;
  if (auto error = document.find("error"); error != document.end()) {
    message.canceled = true;
    message.cancel_reason =
        error->is_object() ? String(*error, "message") : ErrorMessage(error->dump());
    if (message.cancel_reason.empty()) message.cancel_reason = error->dump();
    return message;
  }
  const json& result = Object(document, "result");
  message.created = Bool(result, "created");
  message.canceled = Bool(result, "canceled");
  message.revision = HeaderRevision(result);
  message.compact_revision = Int(result, "compact_revision");
  message.cancel_reason = String(result, "cancel_reason");
  for (const json& event : Array(result, "events")) message.events.push_back(ToEvent(event));
  return message;
}

std::string ErrorMessage(std::string_view body) {
  json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!document.is_discarded() && document.is_object()) {
    for (const char* name : {"message", "error"}) {
      auto it = document.find(name);
      if (it != document.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
        return it->get<std::string>();
      }
    }
  }
  std::string text(body.substr(0, 200));
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? "(empty answer)" : text;
}

}  // namespace cpplaunch::etcd::json
