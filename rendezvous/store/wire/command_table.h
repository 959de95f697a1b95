#pragma once
// The c10d TCPStore command tables (docs/store_protocol.md, and
// ../shared/docs/tcpstore-protocol.md beside the project): the command bytes of both dialects,
// the reply bytes, and each command's layout on the wire as a field program, for the request
// and for its reply. Pure data; the decoders and encoders run these programs.
//
// Integers on the wire are little-endian; lengths and key counts are u64.

#include <cstdint>
#include <optional>

namespace cpplaunch {

// Which numbering a connection speaks. Legacy = PyTorch <= 2.0 (SET = 0, WATCH_KEY = 7);
// modern = PyTorch >= 2.1 (VALIDATE = 0 + magic first, every other command shifted by one);
// agent = a cpplaunch agent (AGENT_HELLO first, agent_handshake.h): the modern numbering without
// VALIDATE plus the agent-only commands, whose bytes no PyTorch dialect uses.
enum class Dialect : uint8_t { kUndecided, kLegacy, kModern, kAgent };

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
  // Agent dialect only (docs/security.md):
  kAgentHello,       // first message: u32 magic, Bytes agent nonce; reply Bytes nonce | proof
  kAgentProof,       // second message: Bytes HMAC; reply u8 (0 accepted; else closed)
  kClaim,            // Str key, Bytes value: stored owned by the connection unless present
  kWill,             // Str key, Bytes value: set when the connection closes, unless present
  kCancelWills,      // forgets the connection's wills
  kClearWorkerKeys,  // deletes every key of the workers' namespace; reply i64 count
  kArm,  // Str end, Bytes will, Str beat, Str armed, Str count, i64 size, Str all_armed: in order
         // CANCEL_WILLS, WILL end, ADD beat 1, SET armed "", ADD count 1, then SET all_armed ""
         // when the count is size; reply i64 the count (store_steps.h: ArmRound)
};

const char* CommandName(Command command);  // "SET", "COMPARE_SET", ...

// The command byte of `command` in `dialect`, or -1 when that dialect has no such command.
// Legacy also gets the mid-2023 numbers APPEND=9, MULTI_GET=10, MULTI_SET=11, CANCEL_WAIT=12.
int WireCode(Dialect dialect, Command command);

// The command that `byte` names in `dialect` (kLegacy or kModern); nullopt for an unknown byte.
// Modern byte 0 (VALIDATE) is not a command here: it is valid only as a connection's first
// bytes, which the request decoder recognises before it looks commands up.
std::optional<Command> CommandFromWire(Dialect dialect, uint8_t byte);

inline constexpr uint32_t kValidateMagic = 0x3C85F7CE;  // bytes CE F7 85 3C

// The agent dialect's command bytes: AGENT_HELLO = 0xC7 ... ARM = 0xCD, far from
// both PyTorch numberings (legacy 0..12, modern 0..18), so a first byte 0xC7 can only be an agent
// and a PyTorch connection sending one of these bytes is closed as an unknown command.
inline constexpr uint8_t kAgentHelloByte = 0xC7;
inline constexpr uint32_t kAgentHelloMagic = 0x414C5043;  // bytes 43 50 4C 41 ("CPLA")
// Replies to AGENT_PROOF and WILL.
inline constexpr uint8_t kAgentAccepted = 0;
inline constexpr uint8_t kAgentRefused = 1;

// Reply bytes (CheckResponseType, WaitResponseType, WatchResponseType).
inline constexpr uint8_t kCheckReady = 0;
inline constexpr uint8_t kCheckNotReady = 1;
inline constexpr uint8_t kStopWaiting = 0;
inline constexpr uint8_t kWaitCanceled = 1;
inline constexpr uint8_t kKeyUpdated = 0;
inline constexpr uint8_t kKeyCreated = 1;
inline constexpr uint8_t kKeyDeleted = 2;
inline constexpr uint8_t kKeyCallbackRegistered = 3;

// One field of a message layout. A field program is an array of fields ending in kEnd; the list
// fields repeat a body (one key, one value, or one key/value pair) a number of times.
// Decoded fields land in the message's keys, values, number, u32 or u8.
enum class Field : uint8_t {
  kEnd,
  kU8,              // 1 byte
  kU32,             // 4 bytes
  kI64,             // 8 bytes, into `number`
  kKey,             // u64 length + that many bytes, appended to `keys`
  kValue,           // u64 length + that many bytes, appended to `values`
  kKeyList,         // u64 count + count x kKey (CHECK, WAIT, MULTI_GET requests)
  kPairList,        // u64 count + count x (kKey kValue) (MULTI_SET request)
  kCountedKeys,     // i64 count, kept in `number`, + count x kKey (LIST_KEYS reply)
  kOptionalValue,   // i64, kept in `number`, + one kValue when it is > 0 (QUEUE_POP reply)
  kExpectedValues,  // no bytes of its own: `expected` x kValue, the count being known from the
                    // request (MULTI_GET reply)
};

// The request layout of `command` (after its command byte). Never null.
const Field* RequestProgram(Command command);
// The same in `dialect`: an agent connection's CANCEL_WAIT carries the u32 tag of the WAIT it
// cancels (tag_framing.h); every other layout is the dialect-independent one.
const Field* RequestProgram(Dialect dialect, Command command);

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

// The layout of a reply of `shape`. Never null.
const Field* ReplyProgram(ReplyShape shape);

}  // namespace cpplaunch
