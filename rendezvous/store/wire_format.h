#pragma once
// The c10d TCPStore wire format, both dialects (docs/store_protocol.md, and
// ../shared/docs/tcpstore-protocol.md beside the project): pure incremental decoders and
// encoders, no I/O.
//
// - RequestDecoder (server side): bytes in, complete Requests out. Detects the dialect of a
//   connection from its first bytes, checks every length prefix against WireLimits before
//   anything is stored, and grows buffers only as bytes arrive.
// - Encode*Reply (server side), EncodeRequest + ReplyDecoder (client side).
//
// Integers on the wire are little-endian; lengths and key counts are u64.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/store/store.h"

namespace cpplaunch {

// Which numbering a connection speaks. Legacy = PyTorch <= 2.0 (SET = 0, WATCH_KEY = 7);
// modern = PyTorch >= 2.1 (VALIDATE = 0 + magic first, every other command shifted by one).
enum class Dialect : uint8_t { kUndecided, kLegacy, kModern };

// Dialect-independent command names; WireCode() maps them to bytes.
enum class Command : uint8_t {
  kValidate,
  kSet,
  kCompareSet,
  kGet,
  kAdd,
  kCheck,
  kWait,
  kGetNumKeys,
  kWatchKey,  // legacy only
  kDeleteKey,
  kAppend,
  kMultiGet,
  kMultiSet,
  kCancelWait,
  kPing,       // modern only
  kQueuePush,  // modern only
  kQueuePop,   // modern only
  kQueueLen,   // modern only
  kListKeys,   // modern only
  kBarrier,    // modern only
};

const char* CommandName(Command command);  // "SET", "COMPARE_SET", ...

// The command byte of `command` in `dialect`, or -1 when that dialect has no such command.
// Legacy also gets the mid-2023 numbers APPEND=9, MULTI_GET=10, MULTI_SET=11, CANCEL_WAIT=12.
int WireCode(Dialect dialect, Command command);

inline constexpr uint32_t kValidateMagic = 0x3C85F7CE;  // bytes CE F7 85 3C

// Reply bytes (CheckResponseType, WaitResponseType, WatchResponseType).
inline constexpr uint8_t kCheckReady = 0;
inline constexpr uint8_t kCheckNotReady = 1;
inline constexpr uint8_t kStopWaiting = 0;
inline constexpr uint8_t kWaitCanceled = 1;
inline constexpr uint8_t kKeyUpdated = 0;
inline constexpr uint8_t kKeyCreated = 1;
inline constexpr uint8_t kKeyDeleted = 2;
inline constexpr uint8_t kKeyCallbackRegistered = 3;

// Caps checked against every length prefix before any byte of the field is stored.
// Defaults are those of PyTorch's libuv server.
struct WireLimits {
  uint64_t max_key_bytes = 8 * 1024;
  uint64_t max_value_bytes = 8 * 1024 * 1024;
  uint64_t max_key_count = 131072;  // CHECK/WAIT/MULTI_GET keys, MULTI_SET pairs, reply lists
  // All keys and values of one request together (a MULTI_SET of many big values); ours, not
  // PyTorch's.
  uint64_t max_request_bytes = 64 * 1024 * 1024;
};

namespace wire_detail {
// A field of a request layout (RequestDecoder's internal program).
enum class Field : uint8_t { kEnd, kKey, kValue, kI64, kU32, kKeyList, kPairList };
}  // namespace wire_detail

// One decoded request. Which fields are used depends on the command:
//   keys:   SET/GET/ADD/.. key; CHECK/WAIT/MULTI_GET key list; MULTI_SET keys
//   values: SET value; COMPARE_SET {expected, desired}; APPEND/QUEUE_PUSH data; MULTI_SET values
//   number: ADD delta, BARRIER world size
//   u32:    PING nonce, VALIDATE magic
struct Request {
  Command command = Command::kGetNumKeys;
  std::vector<std::string> keys;
  std::vector<Bytes> values;
  int64_t number = 0;
  uint32_t u32 = 0;

  void Clear();
};

enum class DecodeStatus { kNeedMore, kRequest, kMalformed };

struct DecodeResult {
  DecodeStatus status;
  size_t consumed;  // bytes of the input used by this call
};

// Incremental request decoder for one connection. Not thread-safe; one per connection.
// Memory held is bounded by the limits: a field's buffer grows with the bytes that arrived.
class RequestDecoder {
 public:
  explicit RequestDecoder(WireLimits limits = {});

  // Consumes bytes until one request is complete (kRequest: read it with request()), the input
  // is exhausted (kNeedMore: everything was consumed and kept), or the input is invalid
  // (kMalformed: see error(); the decoder stays failed). Call again with the rest of the input.
  DecodeResult Feed(std::string_view input);

  // The last complete request; valid (and movable-from) until the next Feed().
  Request& request() { return request_; }
  const std::string& error() const { return error_; }
  Dialect dialect() const { return dialect_; }
  // True between requests (no partial request buffered).
  bool idle() const { return stage_ == Stage::kCommand && pending_size_ == 0; }

 private:
  enum class Stage : uint8_t {
    kDialect,  // first byte was 0: waiting for 5 bytes to tell VALIDATE from legacy SET
    kCommand,
    kFields,
    kFailed,
  };

  size_t FeedDialect(std::string_view input);
  bool StartCommand(uint8_t byte);
  size_t FeedFields(std::string_view input, bool* done);
  size_t FeedFixed(std::string_view input, size_t width, bool* complete);
  size_t FeedBlob(std::string_view input);
  bool FinishFixed();
  bool BeginBlob(uint64_t length, bool is_key);
  bool BeginList(uint64_t count, bool pairs);
  bool Fail(std::string reason);

  WireLimits limits_;
  Dialect dialect_ = Dialect::kUndecided;
  Stage stage_ = Stage::kCommand;
  Request request_;
  const wire_detail::Field* program_ = nullptr;    // the current field of the command
  const wire_detail::Field* list_body_ = nullptr;  // set while inside a key / pair list
  const wire_detail::Field* after_list_ = nullptr;
  uint64_t list_remaining_ = 0;
  uint64_t request_bytes_ = 0;  // declared key/value bytes of the current request
  uint8_t fixed_[8] = {};       // bytes of an integer field received so far
  size_t pending_size_ = 0;
  bool in_blob_ = false;
  uint64_t blob_remaining_ = 0;
  std::string* blob_ = nullptr;
  std::string error_;
};

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

// The shape of the reply a client waits for after each command.
enum class ReplyShape : uint8_t {
  kNone,
  kU8,          // CHECK, WAIT, CANCEL_WAIT, BARRIER, WATCH_KEY
  kU32,         // PING
  kI64,         // ADD, GETNUMKEYS, DELETE_KEY, QUEUE_LEN
  kBytes,       // GET, COMPARE_SET
  kBytesList,   // MULTI_GET: `count` Bytes back to back
  kQueuePop,    // i64 length before the pop, then Bytes when it was > 0
  kKeyList,     // LIST_KEYS: i64 n + n x Str
  kWatchEvent,  // legacy notification: u8 type, Str key, Bytes old, Bytes new
};
ReplyShape ReplyShapeOf(Command command);

struct Reply {
  uint8_t u8 = 0;
  uint32_t u32 = 0;
  int64_t number = 0;
  std::vector<Bytes> values;      // kBytes: 1; kBytesList: count; kQueuePop: 0 or 1;
                                  // kWatchEvent: {old, new}
  std::vector<std::string> keys;  // kKeyList; kWatchEvent: {key}
};

// Incremental decoder of one reply whose shape the caller knows. Lengths and counts the server
// sends are checked against the limits (a client must not trust them either).
class ReplyDecoder {
 public:
  explicit ReplyDecoder(WireLimits limits = {});

  // Starts a new reply; `count` is the number of values for kBytesList.
  void Expect(ReplyShape shape, uint64_t count = 0);
  // Same contract as RequestDecoder::Feed; kRequest means "reply complete".
  DecodeResult Feed(std::string_view input);
  Reply& reply() { return reply_; }
  const std::string& error() const { return error_; }

 private:
  void OnFixed(uint64_t value);
  void OnBlobDone();
  void StartBlob(uint64_t length, bool is_key);
  void Fail(std::string reason);

  WireLimits limits_;
  ReplyShape shape_ = ReplyShape::kNone;
  int phase_ = 0;  // fields of the reply completed so far
  uint64_t remaining_items_ = 0;
  uint8_t fixed_[8] = {};
  size_t fixed_size_ = 0;
  size_t fixed_width_ = 8;
  bool in_blob_ = false;
  uint64_t blob_remaining_ = 0;
  std::string* blob_ = nullptr;
  bool done_ = true;
  bool failed_ = false;
  Reply reply_;
  std::string error_;
};

}  // namespace cpplaunch
