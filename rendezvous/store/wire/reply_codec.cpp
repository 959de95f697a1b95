#include "rendezvous/store/wire/reply_codec.h"

#include <limits>

namespace cpplaunch {
namespace {

void StoreLittleEndian(uint64_t value, size_t width, std::string* out) {
  char bytes[8];
  for (size_t i = 0; i < width; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  out->append(bytes, width);
}

// A reply is capped field by field only: the whole-request cap is the server's defence against
// one client's MULTI_SET, while a reply's size follows from the request the client chose.
WireLimits ReplyLimits(WireLimits limits) {
  limits.max_request_bytes = std::numeric_limits<uint64_t>::max();
  return limits;
}

}  // namespace

// ---- Encoders

void EncodeU8(uint8_t value, std::string* out) { out->push_back(static_cast<char>(value)); }
void EncodeU32(uint32_t value, std::string* out) { StoreLittleEndian(value, 4, out); }
void EncodeI64(int64_t value, std::string* out) {
  StoreLittleEndian(static_cast<uint64_t>(value), 8, out);
}
void EncodeU64(uint64_t value, std::string* out) { StoreLittleEndian(value, 8, out); }
void EncodeBytes(std::string_view value, std::string* out) {
  EncodeU64(value.size(), out);
  out->append(value);
}

void EncodeWatchEvent(uint8_t type, std::string_view key, std::string_view old_value,
                      std::string_view new_value, std::string* out) {
  EncodeU8(type, out);
  EncodeBytes(key, out);
  EncodeBytes(old_value, out);
  EncodeBytes(new_value, out);
}

// Walks the same program the server's decoder runs, so the two cannot disagree on a layout.
// Request programs hold only the fields below; the reply-only fields never occur here.
bool EncodeRequest(Dialect dialect, const Request& request, std::string* out) {
  int code = WireCode(dialect, request.command);
  if (code < 0) return false;
  EncodeU8(static_cast<uint8_t>(code), out);
  size_t next_key = 0;
  size_t next_value = 0;
  for (const Field* field = RequestProgram(dialect, request.command); *field != Field::kEnd;
       ++field) {
    switch (*field) {
      case Field::kKey:
        EncodeBytes(request.keys.at(next_key++), out);
        break;
      case Field::kValue:
        EncodeBytes(request.values.at(next_value++), out);
        break;
      case Field::kI64:
        EncodeI64(request.number, out);
        break;
      case Field::kU32:
        EncodeU32(request.u32, out);
        break;
      case Field::kKeyList:
        EncodeU64(request.keys.size(), out);
        for (const auto& key : request.keys) EncodeBytes(key, out);
        break;
      case Field::kPairList:
        EncodeU64(request.keys.size(), out);
        for (size_t i = 0; i < request.keys.size(); ++i) {
          EncodeBytes(request.keys[i], out);
          EncodeBytes(request.values.at(i), out);
        }
        break;
      default:
        break;
    }
  }
  return true;
}

// ---- ReplyDecoder

ReplyDecoder::ReplyDecoder(WireLimits limits) : limits_(limits), fields_(ReplyLimits(limits)) {}

void ReplyDecoder::Expect(ReplyShape shape, uint64_t count) {
  reply_.values.clear();
  reply_.keys.clear();
  error_.clear();
  failed_ = false;
  fields_.Start(ReplyProgram(shape),
                {&reply_.keys, &reply_.values, &reply_.number, &reply_.u32, &reply_.u8}, count);
  // The count of a MULTI_GET reply comes from the caller, not the wire, so it is checked here
  // rather than by the reader; the reply then fails before its first byte.
  if (shape == ReplyShape::kBytesList && count > limits_.max_key_count) {
    failed_ = true;
    error_ = "reply list of " + std::to_string(count) + " values exceeds the limit";
  }
}

DecodeResult ReplyDecoder::Feed(std::string_view input) {
  if (failed_) return {DecodeStatus::kMalformed, 0};
  DecodeResult result = fields_.Feed(input);
  if (result.status == DecodeStatus::kMalformed) {
    failed_ = true;
    error_ = FieldErrorText();
  }
  return result;
}

std::string ReplyDecoder::FieldErrorText() const {
  const std::string value = std::to_string(fields_.error_value());
  switch (fields_.error()) {
    case FieldError::kKeyLength:
      return "the server sent a key length of " + value + " (limit " +
             std::to_string(limits_.max_key_bytes) + ")";
    case FieldError::kValueLength:
      return "the server sent a value length of " + value + " (limit " +
             std::to_string(limits_.max_value_bytes) + ")";
    case FieldError::kCount:
      return "the server sent a key count of " + value + " (limit " +
             std::to_string(limits_.max_key_count) + ")";
    case FieldError::kMessageBytes:
    case FieldError::kNone:
      break;
  }
  return "malformed reply";
}

}  // namespace cpplaunch
