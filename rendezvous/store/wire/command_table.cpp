#include "rendezvous/store/wire/command_table.h"

#include <algorithm>
#include <array>

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

// The agent-only commands, from kAgentHelloByte on.
constexpr std::array<Command, 7> kAgentCodes = {
    Command::kAgentHello,  Command::kAgentProof,      Command::kClaim, Command::kWill,
    Command::kCancelWills, Command::kClearWorkerKeys, Command::kArm,
};

template <size_t N>
int IndexOf(const std::array<Command, N>& codes, Command command) {
  auto it = std::find(codes.begin(), codes.end(), command);
  return it == codes.end() ? -1 : static_cast<int>(it - codes.begin());
}

// Request programs. Layouts follow TCPStore's (tcpstore-protocol.md section 3); there is no
// length or header around a message, so a wrong program desynchronises the connection.
constexpr Field kProgNone[] = {Field::kEnd};
constexpr Field kProgKey[] = {Field::kKey, Field::kEnd};
constexpr Field kProgKeyValue[] = {Field::kKey, Field::kValue, Field::kEnd};
constexpr Field kProgKeyTwoValues[] = {Field::kKey, Field::kValue, Field::kValue, Field::kEnd};
constexpr Field kProgKeyI64[] = {Field::kKey, Field::kI64, Field::kEnd};
constexpr Field kProgKeyList[] = {Field::kKeyList, Field::kEnd};
constexpr Field kProgPairList[] = {Field::kPairList, Field::kEnd};
constexpr Field kProgU32[] = {Field::kU32, Field::kEnd};
constexpr Field kProgValue[] = {Field::kValue, Field::kEnd};
constexpr Field kProgU32Value[] = {Field::kU32, Field::kValue, Field::kEnd};
// ARM: end key, will, heartbeat key, armed-mark key, count key, the round's size, all-armed key.
constexpr Field kProgArm[] = {Field::kKey, Field::kValue, Field::kKey, Field::kKey,
                              Field::kKey, Field::kI64,   Field::kKey, Field::kEnd};

// Reply programs.
constexpr Field kReplyU8[] = {Field::kU8, Field::kEnd};
constexpr Field kReplyI64[] = {Field::kI64, Field::kEnd};
constexpr Field kReplyValue[] = {Field::kValue, Field::kEnd};
constexpr Field kReplyValues[] = {Field::kExpectedValues, Field::kEnd};
constexpr Field kReplyQueuePop[] = {Field::kOptionalValue, Field::kEnd};
constexpr Field kReplyKeys[] = {Field::kCountedKeys, Field::kEnd};
// WATCH_KEY's own reply is one u8 (KEY_CALLBACK_REGISTERED); this layout is for the
// notifications the legacy server pushes afterwards on that (callback) connection.
constexpr Field kReplyWatchEvent[] = {Field::kU8, Field::kKey, Field::kValue, Field::kValue,
                                      Field::kEnd};

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
    case Command::kAgentHello:
      return "AGENT_HELLO";
    case Command::kAgentProof:
      return "AGENT_PROOF";
    case Command::kClaim:
      return "CLAIM";
    case Command::kWill:
      return "WILL";
    case Command::kCancelWills:
      return "CANCEL_WILLS";
    case Command::kClearWorkerKeys:
      return "CLEAR_WORKER_KEYS";
    case Command::kArm:
      return "ARM";
  }
  return "?";  // only for a value outside the enum; keeps -Wreturn-type quiet
}

int WireCode(Dialect dialect, Command command) {
  if (dialect == Dialect::kLegacy) return IndexOf(kLegacyCodes, command);
  if (dialect == Dialect::kModern) return IndexOf(kModernCodes, command);
  if (dialect == Dialect::kAgent) {
    if (int agent = IndexOf(kAgentCodes, command); agent >= 0) return kAgentHelloByte + agent;
    return command == Command::kValidate ? -1 : IndexOf(kModernCodes, command);
  }
  return -1;
}

std::optional<Command> CommandFromWire(Dialect dialect, uint8_t byte) {
  if (dialect == Dialect::kAgent) {
    if (byte >= kAgentHelloByte && size_t{byte} - kAgentHelloByte < kAgentCodes.size()) {
      return kAgentCodes[byte - kAgentHelloByte];
    }
    dialect = Dialect::kModern;  // every modern command but VALIDATE
  }
  if (dialect == Dialect::kModern) {
    // VALIDATE after the first message is an unknown command to PyTorch's servers too: they
    // close the connection (VALIDATE exists to refuse port scanners, PyTorch issue #106294).
    if (byte == 0 || byte >= kModernCodes.size()) return std::nullopt;
    return kModernCodes[byte];
  }
  if (byte >= kLegacyCodes.size()) return std::nullopt;
  return kLegacyCodes[byte];
}

const Field* RequestProgram(Dialect dialect, Command command) {
  if (dialect == Dialect::kAgent && command == Command::kCancelWait) return kProgU32;
  return RequestProgram(command);
}

const Field* RequestProgram(Command command) {
  switch (command) {
    case Command::kValidate:
    case Command::kPing:
      return kProgU32;
    case Command::kAgentHello:
      return kProgU32Value;
    case Command::kAgentProof:
      return kProgValue;
    case Command::kClaim:
    case Command::kWill:
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
    case Command::kArm:
      return kProgArm;
    case Command::kGetNumKeys:
    case Command::kCancelWait:
    case Command::kListKeys:
    case Command::kCancelWills:
    case Command::kClearWorkerKeys:
      return kProgNone;
  }
  return kProgNone;
}

ReplyShape ReplyShapeOf(Command command) {
  switch (command) {
    case Command::kValidate:
    case Command::kSet:
    case Command::kAppend:
    case Command::kMultiSet:
    case Command::kQueuePush:
      // No reply: clients send the next request straight away, so a server that answered
      // would desynchronise them.
      return ReplyShape::kNone;
    case Command::kCheck:
    case Command::kWait:
    case Command::kCancelWait:
    case Command::kBarrier:
    case Command::kWatchKey:
    case Command::kAgentProof:
    case Command::kWill:
    case Command::kCancelWills:
      return ReplyShape::kU8;
    case Command::kPing:
      return ReplyShape::kU32;
    case Command::kAdd:
    case Command::kGetNumKeys:
    case Command::kDeleteKey:
    case Command::kQueueLen:
    case Command::kClearWorkerKeys:
    case Command::kArm:
      return ReplyShape::kI64;
    case Command::kGet:
    case Command::kCompareSet:
    case Command::kAgentHello:
    case Command::kClaim:
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

const Field* ReplyProgram(ReplyShape shape) {
  switch (shape) {
    case ReplyShape::kNone:
      return kProgNone;
    case ReplyShape::kU8:
      return kReplyU8;
    case ReplyShape::kU32:
      return kProgU32;  // PING's reply echoes its request's nonce
    case ReplyShape::kI64:
      return kReplyI64;
    case ReplyShape::kBytes:
      return kReplyValue;
    case ReplyShape::kBytesList:
      return kReplyValues;
    case ReplyShape::kQueuePop:
      return kReplyQueuePop;
    case ReplyShape::kKeyList:
      return kReplyKeys;
    case ReplyShape::kWatchEvent:
      return kReplyWatchEvent;
  }
  return kProgNone;
}

}  // namespace cpplaunch
