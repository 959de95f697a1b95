#pragma once
// FieldReader: the incremental interpreter of a field program (command_table.h), shared by the
// request and the reply decoder. It takes bytes as they arrive, in pieces of any size, and
// writes each field into the message it was started on.
//
// Memory: every length and count is checked against the limits as soon as its prefix is
// complete, before anything is stored; a blob grows only with the bytes that arrived.
// Errors: the reader reports what broke a limit (error(), error_value()); the owning decoder
// words the message. Not thread-safe; one per connection.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/store/wire/command_table.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

// Where the fields of a program land. Only the members the program uses need to be set (a
// request program has no kU8).
struct FieldTarget {
  std::vector<std::string>* keys = nullptr;
  std::vector<Bytes>* values = nullptr;
  int64_t* number = nullptr;
  uint32_t* u32 = nullptr;
  uint8_t* u8 = nullptr;
};

// The limit a declared length or count broke.
enum class FieldError : uint8_t {
  kNone,
  kKeyLength,     // a key longer than max_key_bytes
  kValueLength,   // a value longer than max_value_bytes
  kMessageBytes,  // keys and values together above max_request_bytes
  kCount,         // a list longer than max_key_count
};

// The unsigned little-endian integer in the first `width` (<= 8) bytes of `bytes`.
uint64_t LoadLittleEndian(const uint8_t* bytes, size_t width);

class FieldReader {
 public:
  // Starts out complete, on an empty program.
  explicit FieldReader(const WireLimits& limits);

  // Starts reading `program` into `target`; `expected` is the count of a kExpectedValues field.
  void Start(const Field* program, FieldTarget target, uint64_t expected = 0);

  // Consumes bytes until the program is complete (kComplete), the input is exhausted
  // (kNeedMore: everything was consumed) or a declared size breaks a limit (kMalformed, with
  // the bytes of that prefix consumed; the reader stays failed until the next Start()).
  // Fields that take no bytes complete without input: Feed("") may return kComplete.
  DecodeResult Feed(std::string_view input);

  FieldError error() const { return error_; }
  uint64_t error_value() const { return error_value_; }  // the offending length or count

  // What the message started last holds so far: each key and value costs kBlobOverhead (its
  // string and its place in the list) plus the buffer grown for it. A buffer grows as bytes
  // arrive, doubling up to its declared length, so this is at most about twice what arrived.
  // Memory a server counts against its budget while a request is not complete.
  uint64_t held() const { return held_; }
  static constexpr uint64_t kBlobOverhead = 64;

 private:
  bool Advance();
  size_t FeedFixed(std::string_view input);
  size_t FeedBlob(std::string_view input);
  void FinishFixed();
  void BeginBlob(uint64_t length, bool is_key);
  void BeginList(uint64_t count, const Field* body);
  void Fail(FieldError error, uint64_t value);

  WireLimits limits_;
  FieldTarget target_;
  const Field* program_;              // the current field, never null
  const Field* list_body_ = nullptr;  // set while inside a list
  const Field* after_list_ = nullptr;
  uint64_t list_remaining_ = 0;
  uint64_t expected_ = 0;
  uint64_t message_bytes_ = 0;  // declared key/value bytes of this message
  uint8_t fixed_[8] = {};       // bytes of an integer field received so far
  size_t fixed_size_ = 0;
  bool in_blob_ = false;
  uint64_t blob_remaining_ = 0;
  uint64_t blob_length_ = 0;    // the declared length of the blob being read
  uint64_t blob_capacity_ = 0;  // the buffer grown for it, counted in held_
  uint64_t held_ = 0;
  std::string* blob_ = nullptr;
  FieldError error_ = FieldError::kNone;
  uint64_t error_value_ = 0;
};

}  // namespace cpplaunch
