#include "etcd_client/etcd_proto.h"

#include <optional>

#include "etcd_client/etcd_error.h"

namespace cpplaunch::etcd::proto {
namespace {

[[noreturn]] void Malformed(const std::string& what) {
  throw EtcdError(EtcdError::Kind::kMalformed, "malformed answer from etcd: " + what);
}

// The wire format (protobuf.dev/programming-guides/encoding): each field is a varint tag,
// (number << 3) | wire type, and then its value.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

void WriteVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void WriteTag(std::string& out, uint32_t number, WireType type) {
  WriteVarint(out, (uint64_t{number} << 3) | type);
}

// int64, bool and enum fields; a negative int64 takes ten bytes, as its two's complement.
void WriteInt(std::string& out, uint32_t number, int64_t value) {
  if (value == 0) return;
  WriteTag(out, number, kVarint);
  WriteVarint(out, static_cast<uint64_t>(value));
}

// A bytes field, or an embedded message.
void WriteBytes(std::string& out, uint32_t number, std::string_view bytes) {
  WriteTag(out, number, kLength);
  WriteVarint(out, bytes.size());
  out.append(bytes);
}

void WriteNonEmpty(std::string& out, uint32_t number, std::string_view bytes) {
  if (!bytes.empty()) WriteBytes(out, number, bytes);
}

// A message of one embedded message.
std::string Wrap(uint32_t number, std::string_view message) {
  std::string out;
  WriteBytes(out, number, message);
  return out;
}

struct Field {
  uint32_t number = 0;
  WireType type = kVarint;
  uint64_t varint = 0;     // kVarint
  std::string_view bytes;  // kLength
};

// The fields of one message, in the order written.
class Reader {
 public:
  explicit Reader(std::string_view message) : rest_(message) {}

  // False at the end of the message.
  bool Next(Field& field) {
    if (rest_.empty()) return false;
    uint64_t tag = Varint();
    field.number = static_cast<uint32_t>(tag >> 3);
    field.type = static_cast<WireType>(tag & 7);
    if (field.number == 0 || tag >> 32 != 0) Malformed("bad field tag " + std::to_string(tag));
    if (field.type == kVarint) {
      field.varint = Varint();
    } else if (field.type == kLength) {
      field.bytes = Take(Varint());
    } else if (field.type == kFixed64 || field.type == kFixed32) {
      Take(field.type == kFixed64 ? 8 : 4);
    } else {  // 3 and 4 (groups, not in proto3), 6 and 7 (undefined)
      Malformed("wire type " + std::to_string(field.type));
    }
    return true;
  }

 private:
  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (rest_.empty()) Malformed("truncated varint");
      auto byte = static_cast<uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      value |= uint64_t{byte & 0x7fU} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    Malformed("varint longer than ten bytes");
  }

  std::string_view Take(uint64_t size) {
    if (size > rest_.size()) Malformed("a field's length runs past the end");
    std::string_view taken = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return taken;
  }

  std::string_view rest_;
};

void Expect(const Field& field, WireType type) {
  if (field.type != type) {
    Malformed("field " + std::to_string(field.number) + " has wire type " +
              std::to_string(field.type) + ", not " + std::to_string(type));
  }
}

int64_t Int(const Field& field) {
  Expect(field, kVarint);
  return static_cast<int64_t>(field.varint);
}

bool Bool(const Field& field) { return Int(field) != 0; }

std::string_view Bytes(const Field& field) {
  Expect(field, kLength);
  return field.bytes;
}

// The last value of field `number` in a message (0 or empty when absent); the whole message is
// read, so that malformed bytes throw wherever they are.
int64_t IntField(std::string_view message, uint32_t number) {
  int64_t value = 0;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == number) value = Int(field);
  }
  return value;
}

std::string_view BytesField(std::string_view message, uint32_t number) {
  std::string_view value;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == number) value = Bytes(field);
  }
  return value;
}

// ResponseHeader.revision = 3.
int64_t HeaderRevision(std::string_view header) { return IntField(header, 3); }

KeyValue ToKeyValue(std::string_view message) {
  KeyValue kv;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == 1) kv.key = Bytes(field);
    if (field.number == 2) kv.create_revision = Int(field);
    if (field.number == 3) kv.mod_revision = Int(field);
    if (field.number == 4) kv.version = Int(field);
    if (field.number == 5) kv.value = Bytes(field);
    if (field.number == 6) kv.lease = Int(field);
  }
  return kv;
}

// The response_range of a ResponseOp, when it carries one.
std::optional<RangeResult> ResponseRange(std::string_view message) {
  std::optional<RangeResult> range;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == 1) range = ParseRange(Bytes(field));
  }
  return range;
}

WatchEvent ToEvent(std::string_view message) {
  WatchEvent event;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    // mvccpb.Event.EventType: PUT = 0, DELETE = 1.
    if (field.number == 1) event.kind = Int(field) == 1 ? WatchEvent::kDelete : WatchEvent::kPut;
    if (field.number == 2) event.kv = ToKeyValue(Bytes(field));
  }
  return event;
}

// Compare.CompareResult: EQUAL = 0, GREATER = 1, LESS = 2, NOT_EQUAL = 3.
int64_t ResultNumber(Compare::Op op) {
  if (op == Compare::Op::kGreater) return 1;
  if (op == Compare::Op::kLess) return 2;
  if (op == Compare::Op::kNotEqual) return 3;
  return 0;
}

// Compare.CompareTarget: VERSION = 0, CREATE = 1, MOD = 2, VALUE = 3, named here rather than
// taken from etcd_types.h's order. The operand is the target_union member in the same order:
// version = 4, create_revision = 5, mod_revision = 6, value = 7.
int64_t TargetNumber(Compare::Target target) {
  if (target == Compare::Target::kCreate) return 1;
  if (target == Compare::Target::kMod) return 2;
  if (target == Compare::Target::kValue) return 3;
  return 0;
}

std::string CompareBody(const Compare& compare) {
  int64_t target = TargetNumber(compare.target);
  std::string out;
  WriteInt(out, 1, ResultNumber(compare.op));
  WriteInt(out, 2, target);
  WriteNonEmpty(out, 3, compare.key);
  // A oneof member is written even when zero or empty, as protobuf does: etcd sees it is set.
  auto operand = static_cast<uint32_t>(4 + target);
  if (compare.target == Compare::Target::kValue) {
    WriteBytes(out, operand, compare.value);
  } else {
    WriteTag(out, operand, kVarint);
    WriteVarint(out, static_cast<uint64_t>(compare.number));
  }
  return out;
}

// A RequestOp: request_range = 1, request_put = 2, request_delete_range = 3.
std::string OpBody(const TxnOp& op) {
  if (op.kind == TxnOp::Kind::kPut) return Wrap(2, PutRequest(op.key, op.value, op.lease));
  return Wrap(op.kind == TxnOp::Kind::kRange ? 1 : 3, RangeRequest(op.key, op.range_end));
}

}  // namespace

// RangeRequest, and the fields DeleteRangeRequest and WatchCreateRequest start with alike.
std::string RangeRequest(std::string_view key, std::string_view range_end) {
  std::string out;
  WriteNonEmpty(out, 1, key);
  WriteNonEmpty(out, 2, range_end);
  return out;
}

std::string PutRequest(std::string_view key, std::string_view value, int64_t lease) {
  std::string out;
  WriteNonEmpty(out, 1, key);
  WriteNonEmpty(out, 2, value);
  WriteInt(out, 3, lease);
  return out;
}

std::string DeleteRequest(std::string_view key, std::string_view range_end) {
  return RangeRequest(key, range_end);
}

std::string TxnRequest(const std::vector<Compare>& compare, const std::vector<TxnOp>& success,
                       const std::vector<TxnOp>& failure) {
  std::string out;
  for (const Compare& c : compare) WriteBytes(out, 1, CompareBody(c));
  for (const TxnOp& op : success) WriteBytes(out, 2, OpBody(op));
  for (const TxnOp& op : failure) WriteBytes(out, 3, OpBody(op));
  return out;
}

std::string LeaseGrantRequest(std::chrono::seconds ttl) {
  std::string out;
  WriteInt(out, 1, ttl.count());
  return out;
}

std::string LeaseRequest(int64_t lease) {
  std::string out;
  WriteInt(out, 1, lease);
  return out;
}

std::string CompactRequest(int64_t revision) {
  std::string out;
  WriteInt(out, 1, revision);
  WriteInt(out, 2, 1);  // physical: answer once the compaction is on disk
  return out;
}

std::string WatchCreateRequest(std::string_view key, std::string_view range_end,
                               int64_t start_revision) {
  std::string create = RangeRequest(key, range_end);
  if (start_revision > 0) WriteInt(create, 3, start_revision);
  return Wrap(1, create);
}

RangeResult ParseRange(std::string_view message) {
  RangeResult result;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == 1) result.revision = HeaderRevision(Bytes(field));
    if (field.number == 2) result.kvs.push_back(ToKeyValue(Bytes(field)));
    if (field.number == 4) result.count = Int(field);
  }
  return result;
}

int64_t ParsePut(std::string_view message) { return HeaderRevision(BytesField(message, 1)); }

int64_t ParseDelete(std::string_view message) { return IntField(message, 2); }

TxnResult ParseTxn(std::string_view message) {
  TxnResult result;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == 1) result.revision = HeaderRevision(Bytes(field));
    if (field.number == 2) result.succeeded = Bool(field);
    if (field.number != 3) continue;
    if (auto range = ResponseRange(Bytes(field))) result.ranges.push_back(std::move(*range));
  }
  return result;
}

LeaseGrant ParseLeaseGrant(std::string_view message) {
  LeaseGrant grant;
  std::string_view error;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == 2) grant.id = Int(field);
    if (field.number == 3) grant.ttl = std::chrono::seconds(Int(field));
    if (field.number == 4) error = Bytes(field);
  }
  if (!error.empty()) Malformed("lease grant refused: " + std::string(error));
  if (grant.id == 0) Malformed("lease grant without an ID");
  return grant;
}

std::chrono::seconds ParseKeepAlive(std::string_view message) {
  return std::chrono::seconds(IntField(message, 3));
}

WatchMessage ParseWatchMessage(std::string_view message) {
  WatchMessage watch;
  Reader reader(message);
  for (Field field; reader.Next(field);) {
    if (field.number == 1) watch.revision = HeaderRevision(Bytes(field));
    if (field.number == 3) watch.created = Bool(field);
    if (field.number == 4) watch.canceled = Bool(field);
    if (field.number == 5) watch.compact_revision = Int(field);
    if (field.number == 6) watch.cancel_reason = Bytes(field);
    if (field.number == 11) watch.events.push_back(ToEvent(Bytes(field)));
  }
  return watch;
}

}  // namespace cpplaunch::etcd::proto
