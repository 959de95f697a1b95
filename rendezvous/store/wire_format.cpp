#include "rendezvous/store/wire_format.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

namespace cpplaunch {
namespace {

// Command byte -> Command, per dialect. Legacy includes the mid-2023 additions 9..12, which
// 1.13 servers reject but cost nothing to understand.
constexpr std::array<Command, 13> kLegacyCodes = {
    Command::kSet,        Command::kCompareSet, Command::kGet,        Command::kAdd,
    Command::kCheck,      Command::kWait,       Command::kGetNumKeys, Command::kWatchKey,
    Command::kDeleteKey,  Command::kAppend,     Command::kMultiGet,   Command::kMultiSet,
    Command::kCancelWait,
};
constexpr std::array<Command, 19> kModernCodes = {
    Command::kValidate,   Command::kSet,      Command::kCompareSet, Command::kGet,
    Command::kAdd,        Command::kCheck,    Command::kWait,       Command::kGetNumKeys,
    Command::kDeleteKey,  Command::kAppend,   Command::kMultiGet,   Command::kMultiSet,
    Command::kCancelWait, Command::kPing,     Command::kQueuePush,  Command::kQueuePop,
    Command::kQueueLen,   Command::kListKeys, Command::kBarrier,
};

std::string HexByte(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", byte);
  return text;
}

uint64_t LoadLittleEndian(const uint8_t* bytes, size_t width) {
  uint64_t value = 0;
  for (size_t i = width; i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

void StoreLittleEndian(uint64_t value, size_t width, std::string* out) {
  char bytes[8];
  for (size_t i = 0; i < width; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  out->append(bytes, width);
}

}  // namespace

const char* CommandName(Command command) {
  switch (command) {
    case Command::kValidate:
      return "VALIDATE";
    case Command::kSet:
      return "SET";
    case Command::kCompareSet:
      return "COMPARE_SET";
    case Command::kGet:
      return "GET";
    case Command::kAdd:
      return "ADD";
    case Command::kCheck:
      return "CHECK";
    case Command::kWait:
      return "WAIT";
    case Command::kGetNumKeys:
      return "GETNUMKEYS";
    case Command::kWatchKey:
      return "WATCH_KEY";
    case Command::kDeleteKey:
      return "DELETE_KEY";
    case Command::kAppend:
      return "APPEND";
    case Command::kMultiGet:
      return "MULTI_GET";
    case Command::kMultiSet:
      return "MULTI_SET";
    case Command::kCancelWait:
      return "CANCEL_WAIT";
    case Command::kPing:
      return "PING";
    case Command::kQueuePush:
      return "QUEUE_PUSH";
    case Command::kQueuePop:
      return "QUEUE_POP";
    case Command::kQueueLen:
      return "QUEUE_LEN";
    case Command::kListKeys:
      return "LIST_KEYS";
    case Command::kBarrier:
      return "BARRIER";
  }
  return "?";
}

int WireCode(Dialect dialect, Command command) {
  if (dialect == Dialect::kLegacy) {
    auto it = std::find(kLegacyCodes.begin(), kLegacyCodes.end(), command);
    return it == kLegacyCodes.end() ? -1 : static_cast<int>(it - kLegacyCodes.begin());
  }
  if (dialect == Dialect::kModern) {
    auto it = std::find(kModernCodes.begin(), kModernCodes.end(), command);
    return it == kModernCodes.end() ? -1 : static_cast<int>(it - kModernCodes.begin());
  }
  return -1;
}

void Request::Clear() {
  keys.clear();
  values.clear();
  number = 0;
  u32 = 0;
}

// ---------------------------------------------------------------------------------------------
// RequestDecoder

using wire_detail::Field;

namespace {
// A command's layout is a short program of fields ending in kEnd; the two list fields run a
// body program (one key, or one key/value pair) `count` times.
constexpr Field kProgNone[] = {Field::kEnd};
constexpr Field kProgKey[] = {Field::kKey, Field::kEnd};
constexpr Field kProgKeyValue[] = {Field::kKey, Field::kValue, Field::kEnd};
constexpr Field kProgKeyTwoValues[] = {Field::kKey, Field::kValue, Field::kValue, Field::kEnd};
constexpr Field kProgKeyI64[] = {Field::kKey, Field::kI64, Field::kEnd};
constexpr Field kProgKeyList[] = {Field::kKeyList, Field::kEnd};
constexpr Field kProgPairList[] = {Field::kPairList, Field::kEnd};
constexpr Field kProgU32[] = {Field::kU32, Field::kEnd};
constexpr Field kKeyBody[] = {Field::kKey, Field::kEnd};
constexpr Field kPairBody[] = {Field::kKey, Field::kValue, Field::kEnd};

const Field* ProgramOf(Command command) {
  switch (command) {
    case Command::kValidate:
    case Command::kPing:
      return kProgU32;
    case Command::kSet:
    case Command::kAppend:
    case Command::kQueuePush:
      return kProgKeyValue;
    case Command::kCompareSet:
      return kProgKeyTwoValues;
    case Command::kGet:
    case Command::kWatchKey:
    case Command::kDeleteKey:
    case Command::kQueuePop:
    case Command::kQueueLen:
      return kProgKey;
    case Command::kAdd:
    case Command::kBarrier:
      return kProgKeyI64;
    case Command::kCheck:
    case Command::kWait:
    case Command::kMultiGet:
      return kProgKeyList;
    case Command::kMultiSet:
      return kProgPairList;
    case Command::kGetNumKeys:
    case Command::kCancelWait:
    case Command::kListKeys:
      return kProgNone;
  }
  return kProgNone;
}
}  // namespace

RequestDecoder::RequestDecoder(WireLimits limits) : limits_(limits) {}

DecodeResult RequestDecoder::Feed(std::string_view input) {
  size_t used = 0;
  for (;;) {
    switch (stage_) {
      case Stage::kFailed:
        return {DecodeStatus::kMalformed, used};
      case Stage::kCommand: {
        if (used == input.size()) return {DecodeStatus::kNeedMore, used};
        auto byte = static_cast<uint8_t>(input[used]);
        if (dialect_ == Dialect::kUndecided && byte == 0) {
          stage_ = Stage::kDialect;
          continue;
        }
        ++used;
        if (dialect_ == Dialect::kUndecided) dialect_ = Dialect::kLegacy;
        if (!StartCommand(byte)) return {DecodeStatus::kMalformed, used};
        continue;
      }
      case Stage::kDialect: {
        used += FeedDialect(input.substr(used));
        if (stage_ == Stage::kDialect) return {DecodeStatus::kNeedMore, used};
        if (stage_ == Stage::kCommand) return {DecodeStatus::kRequest, used};  // VALIDATE
        continue;
      }
      case Stage::kFields: {
        bool done = false;
        used += FeedFields(input.substr(used), &done);
        if (stage_ == Stage::kFailed) return {DecodeStatus::kMalformed, used};
        if (!done) return {DecodeStatus::kNeedMore, used};
        stage_ = Stage::kCommand;
        return {DecodeStatus::kRequest, used};
      }
    }
  }
}

// A first byte 0 is either modern VALIDATE (00 CE F7 85 3C) or a legacy SET, whose 8-byte key
// length would then be >= 0x3C85F7CE00: five bytes decide, and a legacy SET is >= 17 bytes long,
// so waiting for them cannot deadlock.
size_t RequestDecoder::FeedDialect(std::string_view input) {
  size_t take = std::min(input.size(), size_t{5} - pending_size_);
  std::memcpy(fixed_ + pending_size_, input.data(), take);
  pending_size_ += take;
  if (pending_size_ < 5) return take;
  pending_size_ = 0;
  if (LoadLittleEndian(fixed_ + 1, 4) == kValidateMagic) {
    dialect_ = Dialect::kModern;
    request_.Clear();
    request_.command = Command::kValidate;
    request_.u32 = kValidateMagic;
    stage_ = Stage::kCommand;
    return take;
  }
  dialect_ = Dialect::kLegacy;
  char replay[4];
  std::memcpy(replay, fixed_ + 1, 4);
  StartCommand(0);  // legacy SET
  bool done = false;
  FeedFields(std::string_view(replay, 4), &done);  // 4 bytes of the key length: never done
  return take;
}

bool RequestDecoder::StartCommand(uint8_t byte) {
  Command command;
  if (dialect_ == Dialect::kModern) {
    if (byte == 0 || byte >= kModernCodes.size())
      return Fail("unknown command byte " + HexByte(byte) + " (modern dialect)");
    command = kModernCodes[byte];
  } else {
    if (byte >= kLegacyCodes.size())
      return Fail("unknown command byte " + HexByte(byte) + " (legacy dialect)");
    command = kLegacyCodes[byte];
  }
  request_.Clear();
  request_.command = command;
  program_ = ProgramOf(command);
  list_body_ = nullptr;
  list_remaining_ = 0;
  request_bytes_ = 0;
  in_blob_ = false;
  pending_size_ = 0;
  stage_ = Stage::kFields;
  return true;
}

size_t RequestDecoder::FeedFields(std::string_view input, bool* done) {
  size_t used = 0;
  for (;;) {
    if (*program_ == Field::kEnd) {
      if (list_body_ != nullptr && --list_remaining_ > 0) {
        program_ = list_body_;
        continue;
      }
      if (list_body_ != nullptr) {
        list_body_ = nullptr;
        program_ = after_list_;
        continue;
      }
      *done = true;
      return used;
    }
    if (used == input.size()) return used;
    if (in_blob_) {
      used += FeedBlob(input.substr(used));
      if (blob_remaining_ > 0) return used;
      in_blob_ = false;
      ++program_;
      continue;
    }
    size_t width = *program_ == Field::kU32 ? 4 : 8;
    bool complete = false;
    used += FeedFixed(input.substr(used), width, &complete);
    if (!complete) return used;
    if (!FinishFixed()) return used;
  }
}

size_t RequestDecoder::FeedFixed(std::string_view input, size_t width, bool* complete) {
  size_t take = std::min(input.size(), width - pending_size_);
  std::memcpy(fixed_ + pending_size_, input.data(), take);
  pending_size_ += take;
  *complete = pending_size_ == width;
  return take;
}

size_t RequestDecoder::FeedBlob(std::string_view input) {
  size_t take = static_cast<size_t>(std::min<uint64_t>(input.size(), blob_remaining_));
  blob_->append(input.data(), take);
  blob_remaining_ -= take;
  return take;
}

// Applies a completed integer field; false (decoder failed) when it breaks a limit.
bool RequestDecoder::FinishFixed() {
  Field field = *program_;
  uint64_t value = LoadLittleEndian(fixed_, field == Field::kU32 ? 4 : 8);
  pending_size_ = 0;
  switch (field) {
    case Field::kKey:
      return BeginBlob(value, true);
    case Field::kValue:
      return BeginBlob(value, false);
    case Field::kI64:
      request_.number = static_cast<int64_t>(value);
      ++program_;
      return true;
    case Field::kU32:
      request_.u32 = static_cast<uint32_t>(value);
      ++program_;
      return true;
    case Field::kKeyList:
    case Field::kPairList:
      return BeginList(value, field == Field::kPairList);
    case Field::kEnd:
      break;
  }
  return true;
}

bool RequestDecoder::BeginBlob(uint64_t length, bool is_key) {
  uint64_t cap = is_key ? limits_.max_key_bytes : limits_.max_value_bytes;
  const char* what = is_key ? "key" : "value";
  if (length > cap) {
    return Fail(std::string(CommandName(request_.command)) + ": " + what + " length " +
                std::to_string(length) + " exceeds the limit of " + std::to_string(cap));
  }
  if (length > limits_.max_request_bytes - request_bytes_) {
    return Fail(std::string(CommandName(request_.command)) + ": request larger than the limit of " +
                std::to_string(limits_.max_request_bytes) + " bytes");
  }
  request_bytes_ += length;
  auto& list = is_key ? request_.keys : request_.values;
  list.emplace_back();
  blob_ = &list.back();
  blob_remaining_ = length;
  if (length == 0) {
    ++program_;
  } else {
    in_blob_ = true;
  }
  return true;
}

bool RequestDecoder::BeginList(uint64_t count, bool pairs) {
  if (count > limits_.max_key_count) {
    return Fail(std::string(CommandName(request_.command)) + ": key count " +
                std::to_string(count) + " exceeds the limit of " +
                std::to_string(limits_.max_key_count));
  }
  ++program_;
  if (count == 0) return true;
  after_list_ = program_;
  list_remaining_ = count;
  list_body_ = pairs ? kPairBody : kKeyBody;
  program_ = list_body_;
  return true;
}

bool RequestDecoder::Fail(std::string reason) {
  stage_ = Stage::kFailed;
  error_ = std::move(reason);
  return false;
}

// ---------------------------------------------------------------------------------------------
// Encoders

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

bool EncodeRequest(Dialect dialect, const Request& request, std::string* out) {
  int code = WireCode(dialect, request.command);
  if (code < 0) return false;
  EncodeU8(static_cast<uint8_t>(code), out);
  const Field* field = ProgramOf(request.command);
  size_t next_key = 0;
  size_t next_value = 0;
  for (; *field != Field::kEnd; ++field) {
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
      case Field::kEnd:
        break;
    }
  }
  return true;
}

ReplyShape ReplyShapeOf(Command command) {
  switch (command) {
    case Command::kValidate:
    case Command::kSet:
    case Command::kAppend:
    case Command::kMultiSet:
    case Command::kQueuePush:
      return ReplyShape::kNone;
    case Command::kCheck:
    case Command::kWait:
    case Command::kCancelWait:
    case Command::kBarrier:
    case Command::kWatchKey:
      return ReplyShape::kU8;
    case Command::kPing:
      return ReplyShape::kU32;
    case Command::kAdd:
    case Command::kGetNumKeys:
    case Command::kDeleteKey:
    case Command::kQueueLen:
      return ReplyShape::kI64;
    case Command::kGet:
    case Command::kCompareSet:
      return ReplyShape::kBytes;
    case Command::kMultiGet:
      return ReplyShape::kBytesList;
    case Command::kQueuePop:
      return ReplyShape::kQueuePop;
    case Command::kListKeys:
      return ReplyShape::kKeyList;
  }
  return ReplyShape::kNone;
}

// ---------------------------------------------------------------------------------------------
// ReplyDecoder: a reply is a sequence of integer fields and length-prefixed blobs; `phase_`
// counts the fields done and OnFixed/OnBlobDone pick the next one from the shape.

ReplyDecoder::ReplyDecoder(WireLimits limits) : limits_(limits) {}

void ReplyDecoder::Expect(ReplyShape shape, uint64_t count) {
  shape_ = shape;
  phase_ = 0;
  remaining_items_ = count;
  fixed_size_ = 0;
  blob_remaining_ = 0;
  in_blob_ = false;
  done_ = false;
  failed_ = false;
  reply_.values.clear();
  reply_.keys.clear();
  error_.clear();
  switch (shape) {
    case ReplyShape::kNone:
      done_ = true;
      break;
    case ReplyShape::kU8:
    case ReplyShape::kWatchEvent:
      fixed_width_ = 1;
      break;
    case ReplyShape::kU32:
      fixed_width_ = 4;
      break;
    case ReplyShape::kBytesList:
      if (count > limits_.max_key_count) {
        Fail("reply list of " + std::to_string(count) + " values exceeds the limit");
      }
      fixed_width_ = 8;
      done_ = count == 0;
      break;
    default:
      fixed_width_ = 8;
      break;
  }
}

DecodeResult ReplyDecoder::Feed(std::string_view input) {
  size_t used = 0;
  while (!done_ && !failed_) {
    if (used == input.size()) return {DecodeStatus::kNeedMore, used};
    if (in_blob_) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(input.size() - used, blob_remaining_));
      blob_->append(input.data() + used, take);
      used += take;
      blob_remaining_ -= take;
      if (blob_remaining_ == 0) {
        in_blob_ = false;
        OnBlobDone();
      }
      continue;
    }
    size_t take = std::min(input.size() - used, fixed_width_ - fixed_size_);
    std::memcpy(fixed_ + fixed_size_, input.data() + used, take);
    used += take;
    fixed_size_ += take;
    if (fixed_size_ < fixed_width_) continue;
    fixed_size_ = 0;
    OnFixed(LoadLittleEndian(fixed_, fixed_width_));
  }
  if (failed_) return {DecodeStatus::kMalformed, used};
  return {DecodeStatus::kRequest, used};
}

void ReplyDecoder::StartBlob(uint64_t length, bool is_key) {
  uint64_t cap = is_key ? limits_.max_key_bytes : limits_.max_value_bytes;
  if (length > cap) {
    Fail(std::string("the server sent a ") + (is_key ? "key" : "value") + " length of " +
         std::to_string(length) + " (limit " + std::to_string(cap) + ")");
    return;
  }
  auto& list = is_key ? reply_.keys : reply_.values;
  list.emplace_back();
  blob_ = &list.back();
  blob_remaining_ = length;
  fixed_width_ = 8;
  if (length == 0) {
    OnBlobDone();
  } else {
    in_blob_ = true;
  }
}

void ReplyDecoder::OnFixed(uint64_t value) {
  ++phase_;
  switch (shape_) {
    case ReplyShape::kU8:
      reply_.u8 = static_cast<uint8_t>(value);
      done_ = true;
      return;
    case ReplyShape::kU32:
      reply_.u32 = static_cast<uint32_t>(value);
      done_ = true;
      return;
    case ReplyShape::kI64:
      reply_.number = static_cast<int64_t>(value);
      done_ = true;
      return;
    case ReplyShape::kBytes:
    case ReplyShape::kBytesList:
      StartBlob(value, false);
      return;
    case ReplyShape::kQueuePop:
      if (phase_ == 1) {
        reply_.number = static_cast<int64_t>(value);
        done_ = reply_.number <= 0;
        return;
      }
      StartBlob(value, false);
      return;
    case ReplyShape::kKeyList:
      if (phase_ == 1) {
        reply_.number = static_cast<int64_t>(value);
        if (value > limits_.max_key_count) {
          Fail("the server sent a key count of " + std::to_string(value) + " (limit " +
               std::to_string(limits_.max_key_count) + ")");
          return;
        }
        remaining_items_ = value;
        done_ = value == 0;
        return;
      }
      StartBlob(value, true);
      return;
    case ReplyShape::kWatchEvent:
      if (phase_ == 1) {
        reply_.u8 = static_cast<uint8_t>(value);
        fixed_width_ = 8;
        return;
      }
      StartBlob(value, phase_ == 2);
      return;
    case ReplyShape::kNone:
      done_ = true;
      return;
  }
}

void ReplyDecoder::OnBlobDone() {
  ++phase_;
  switch (shape_) {
    case ReplyShape::kBytesList:
    case ReplyShape::kKeyList:
      done_ = --remaining_items_ == 0;
      return;
    case ReplyShape::kWatchEvent:
      done_ = phase_ == 7;  // type, key length, key, old length, old, new length, new
      return;
    default:
      done_ = true;
      return;
  }
}

void ReplyDecoder::Fail(std::string reason) {
  failed_ = true;
  error_ = std::move(reason);
}

}  // namespace cpplaunch
