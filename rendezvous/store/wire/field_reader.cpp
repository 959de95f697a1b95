#include "rendezvous/store/wire/field_reader.h"

#include <algorithm>
#include <cstring>

namespace cpplaunch {
namespace {

// The bodies the list fields repeat.
constexpr Field kKeyBody[] = {Field::kKey, Field::kEnd};
constexpr Field kValueBody[] = {Field::kValue, Field::kEnd};
constexpr Field kPairBody[] = {Field::kKey, Field::kValue, Field::kEnd};
constexpr Field kEmptyProgram[] = {Field::kEnd};

size_t WidthOf(Field field) {
  switch (field) {
    case Field::kU8:
      return 1;
    case Field::kU32:
      return 4;
    default:
      return 8;  // i64, and the u64/i64 length and count prefixes
  }
}

}  // namespace

// Byte by byte, not memcpy: PyTorch writes native integers, so the wire is little-endian in
// practice (every peer that exists is), and this host's order must not matter.
uint64_t LoadLittleEndian(const uint8_t* bytes, size_t width) {
  uint64_t value = 0;
  for (size_t i = width; i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

FieldReader::FieldReader(const WireLimits& limits) : limits_(limits), program_(kEmptyProgram) {}

void FieldReader::Start(const Field* program, FieldTarget target, uint64_t expected) {
  target_ = target;
  program_ = program;
  list_body_ = nullptr;
  list_remaining_ = 0;
  expected_ = expected;
  message_bytes_ = 0;
  fixed_size_ = 0;
  in_blob_ = false;
  blob_remaining_ = 0;
  held_ = 0;
  error_ = FieldError::kNone;
}

DecodeResult FieldReader::Feed(std::string_view input) {
  size_t used = 0;
  for (;;) {
    if (error_ != FieldError::kNone) return {DecodeStatus::kMalformed, used};
    // Ends of lists and fields without bytes are settled before asking for input, so that a
    // message whose last field is empty (a zero-length value) completes with its last byte.
    if (!in_blob_ && !Advance()) return {DecodeStatus::kComplete, used};
    if (used == input.size()) return {DecodeStatus::kNeedMore, used};
    if (in_blob_) {
      used += FeedBlob(input.substr(used));
      if (blob_remaining_ > 0) return {DecodeStatus::kNeedMore, used};
      in_blob_ = false;
      ++program_;
      continue;
    }
    used += FeedFixed(input.substr(used));
    if (fixed_size_ == WidthOf(*program_)) FinishFixed();
  }
}

// Steps past list ends and kExpectedValues; false when the program is complete. One level of
// list state is enough because no list body contains a list.
bool FieldReader::Advance() {
  for (;;) {
    if (*program_ == Field::kExpectedValues) {
      ++program_;
      BeginList(expected_, kValueBody);
      continue;
    }
    if (*program_ != Field::kEnd) return true;
    if (list_body_ == nullptr) return false;
    if (--list_remaining_ > 0) {
      program_ = list_body_;
      continue;
    }
    list_body_ = nullptr;
    program_ = after_list_;
  }
}

size_t FieldReader::FeedFixed(std::string_view input) {
  size_t take = std::min(input.size(), WidthOf(*program_) - fixed_size_);
  std::memcpy(fixed_ + fixed_size_, input.data(), take);
  fixed_size_ += take;
  return take;
}

// The buffer grows by doubling, never past the declared length, and its growth is counted in
// held_ (the server charges it to its budget before the next read).
size_t FieldReader::FeedBlob(std::string_view input) {
  size_t take = static_cast<size_t>(std::min<uint64_t>(input.size(), blob_remaining_));
  const size_t need = blob_->size() + take;
  if (need > blob_->capacity()) {
    const uint64_t grown =
        std::min<uint64_t>(blob_length_, std::max<uint64_t>(need, uint64_t{2} * blob_->capacity()));
    // A fresh buffer of exactly that size: reserve() on the old one would round a step short of
    // doubling up to a doubling, past the declared length (8 MiB would become 15 MiB).
    std::string buffer;
    buffer.reserve(static_cast<size_t>(grown));
    buffer.append(*blob_);
    blob_->swap(buffer);
    held_ += blob_->capacity() - std::min<uint64_t>(blob_capacity_, blob_->capacity());
    blob_capacity_ = blob_->capacity();
  }
  blob_->append(input.data(), take);
  blob_remaining_ -= take;
  return take;
}

// Applies a completed integer: a scalar lands in the target, a length starts a blob, a count
// starts a list.
void FieldReader::FinishFixed() {
  const Field field = *program_;
  const uint64_t value = LoadLittleEndian(fixed_, fixed_size_);
  fixed_size_ = 0;
  switch (field) {
    case Field::kU8:
      *target_.u8 = static_cast<uint8_t>(value);
      ++program_;
      return;
    case Field::kU32:
      *target_.u32 = static_cast<uint32_t>(value);
      ++program_;
      return;
    case Field::kI64:
      *target_.number = static_cast<int64_t>(value);
      ++program_;
      return;
    case Field::kKey:
    case Field::kValue:
      return BeginBlob(value, field == Field::kKey);
    case Field::kKeyList:
    case Field::kPairList:
      if (value > limits_.max_key_count) return Fail(FieldError::kCount, value);
      ++program_;
      return BeginList(value, field == Field::kPairList ? kPairBody : kKeyBody);
    case Field::kCountedKeys:
      // The count is kept even when it breaks the limit, as the reply carries it.
      *target_.number = static_cast<int64_t>(value);
      if (value > limits_.max_key_count) return Fail(FieldError::kCount, value);
      ++program_;
      return BeginList(value, kKeyBody);
    case Field::kOptionalValue:
      *target_.number = static_cast<int64_t>(value);
      ++program_;
      return BeginList(static_cast<int64_t>(value) > 0 ? 1 : 0, kValueBody);
    case Field::kEnd:
    case Field::kExpectedValues:
      return;  // take no bytes; Advance() handles them
  }
}

void FieldReader::BeginBlob(uint64_t length, bool is_key) {
  const uint64_t cap = is_key ? limits_.max_key_bytes : limits_.max_value_bytes;
  if (length > cap) return Fail(is_key ? FieldError::kKeyLength : FieldError::kValueLength, length);
  // Subtracted rather than added: a hostile length near 2^64 would overflow the sum.
  if (length > limits_.max_request_bytes - message_bytes_) {
    return Fail(FieldError::kMessageBytes, length);
  }
  message_bytes_ += length;
  held_ += kBlobOverhead;
  blob_length_ = length;
  blob_capacity_ = 0;
  auto& list = is_key ? *target_.keys : *target_.values;
  list.emplace_back();
  // Stays valid: nothing is appended to this vector until the blob is complete.
  blob_ = &list.back();
  blob_remaining_ = length;
  if (length == 0) {
    ++program_;
  } else {
    in_blob_ = true;
  }
}

// Expects `program_` to point past the list field already.
void FieldReader::BeginList(uint64_t count, const Field* body) {
  if (count == 0) return;
  after_list_ = program_;
  list_remaining_ = count;
  list_body_ = body;
  program_ = body;
}

void FieldReader::Fail(FieldError error, uint64_t value) {
  error_ = error;
  error_value_ = value;
}

}  // namespace cpplaunch
