#pragma once
// The encoders of the TCPStore wire format and the client's reply decoder. Pure: no I/O.
//
// - Encode*Reply pieces (server side): the integers, byte strings and WATCH_KEY notifications
//   the table answers with.
// - EncodeRequest + ReplyDecoder (client side): a request is written by its command's field
//   program, and a reply is read by the field program of its shape (command_table.h), with the
//   same FieldReader the server's RequestDecoder uses.

#include <cstdint>
#include <string>
#include <string_view>

#include "rendezvous/store/wire/command_table.h"
#include "rendezvous/store/wire/field_reader.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

// ---- Reply encoders (server side). Each appends to *out.
void EncodeU8(uint8_t value, std::string* out);
void EncodeU32(uint32_t value, std::string* out);
void EncodeI64(int64_t value, std::string* out);
void EncodeU64(uint64_t value, std::string* out);
void EncodeBytes(std::string_view value, std::string* out);  // u64 length + bytes
// A legacy WATCH_KEY notification: u8 type | Str key | Bytes old | Bytes new.
void EncodeWatchEvent(uint8_t type, std::string_view key, std::string_view old_value,
                      std::string_view new_value, std::string* out);

// ---- Request encoder (client side). Appends `request` in `dialect` (kLegacy or kModern) to
// *out. Returns false (appending nothing) when the dialect has no such command.
bool EncodeRequest(Dialect dialect, const Request& request, std::string* out);

// Incremental decoder of one reply whose shape the caller knows. Lengths and counts the server
// sends are checked against the limits (a client must not trust them either).
// Not thread-safe; one per connection.
class ReplyDecoder {
 public:
  explicit ReplyDecoder(WireLimits limits = {});

  // Starts a new reply; `count` is the number of values for kBytesList. The values and keys of
  // the previous reply are cleared; u8, u32 and number keep their values until overwritten.
  void Expect(ReplyShape shape, uint64_t count = 0);
  // Same contract as RequestDecoder::Feed, for one reply (a kNone reply, or an empty
  // kBytesList, completes without input: Feed("") may return kComplete).
  DecodeResult Feed(std::string_view input);
  Reply& reply() { return reply_; }
  const std::string& error() const { return error_; }

 private:
  std::string FieldErrorText() const;

  WireLimits limits_;
  FieldReader fields_;
  bool failed_ = false;
  Reply reply_;
  std::string error_;
};

}  // namespace cpplaunch
