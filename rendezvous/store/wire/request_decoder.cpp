#include "rendezvous/store/wire/request_decoder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace cpplaunch {
namespace {

std::string HexByte(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", byte);
  return text;
}

}  // namespace

RequestDecoder::RequestDecoder(WireLimits limits) : limits_(limits), fields_(limits_) {}

DecodeResult RequestDecoder::Feed(std::string_view input) {
  size_t used = 0;
  for (;;) {
    switch (stage_) {
      case Stage::kFailed:
        return {DecodeStatus::kMalformed, used};
      case Stage::kCommand: {
        if (used == input.size()) return {DecodeStatus::kNeedMore, used};
        auto byte = static_cast<uint8_t>(input[used]);
        // Clients of PyTorch >= 2.1 always open with VALIDATE (byte 0), so any other first byte
        // is a legacy peer; the dialect then holds for the connection, since the two numberings
        // share byte values.
        if (dialect_ == Dialect::kUndecided && byte == 0) {
          stage_ = Stage::kDialect;
          continue;
        }
        ++used;
        if (dialect_ == Dialect::kUndecided) {
          dialect_ = byte == kAgentHelloByte ? Dialect::kAgent : Dialect::kLegacy;
        }
        if (!StartCommand(byte)) return {DecodeStatus::kMalformed, used};
        continue;
      }
      case Stage::kTag: {
        used += FeedTag(input.substr(used));
        if (stage_ == Stage::kTag) return {DecodeStatus::kNeedMore, used};
        continue;
      }
      case Stage::kDialect: {
        used += FeedDialect(input.substr(used));
        if (stage_ == Stage::kDialect) return {DecodeStatus::kNeedMore, used};
        if (stage_ == Stage::kCommand) return {DecodeStatus::kComplete, used};  // VALIDATE
        continue;
      }
      case Stage::kFields: {
        DecodeResult fields = fields_.Feed(input.substr(used));
        used += fields.consumed;
        if (fields.status == DecodeStatus::kMalformed) {
          Fail(FieldErrorText());
          return {DecodeStatus::kMalformed, used};
        }
        if (fields.status == DecodeStatus::kNeedMore) return {DecodeStatus::kNeedMore, used};
        // Stop at every request even when input remains: request_ is reused by the next one.
        // After the proof an agent connection's requests begin with their tag.
        stage_ = dialect_ == Dialect::kAgent && agent_step_ == AgentStep::kReady ? Stage::kTag
                                                                                 : Stage::kCommand;
        return {DecodeStatus::kComplete, used};
      }
    }
  }
}

// A first byte 0 is either modern VALIDATE (00 CE F7 85 3C) or a legacy SET, whose 8-byte key
// length would then be >= 0x3C85F7CE00: five bytes decide, and a legacy SET is >= 17 bytes long,
// so waiting for them cannot deadlock.
size_t RequestDecoder::FeedDialect(std::string_view input) {
  size_t take = std::min(input.size(), sizeof first_bytes_ - first_size_);
  std::memcpy(first_bytes_ + first_size_, input.data(), take);
  first_size_ += take;
  if (first_size_ < sizeof first_bytes_) return take;
  first_size_ = 0;
  if (LoadLittleEndian(first_bytes_ + 1, 4) == kValidateMagic) {
    dialect_ = Dialect::kModern;
    request_.Clear();
    request_.command = Command::kValidate;
    request_.u32 = kValidateMagic;
    stage_ = Stage::kCommand;
    return take;
  }
  dialect_ = Dialect::kLegacy;
  StartCommand(0);  // legacy SET
  // The other 4 bytes begin the SET's 8-byte key length: replayed, they cannot complete it.
  fields_.Feed(std::string_view(reinterpret_cast<const char*>(first_bytes_ + 1), 4));
  return take;
}

size_t RequestDecoder::FeedTag(std::string_view input) {
  size_t take = std::min(input.size(), sizeof tag_bytes_ - tag_size_);
  std::memcpy(tag_bytes_ + tag_size_, input.data(), take);
  tag_size_ += take;
  if (tag_size_ < sizeof tag_bytes_) return take;
  tag_size_ = 0;
  tag_ = static_cast<uint32_t>(LoadLittleEndian(tag_bytes_, sizeof tag_bytes_));
  stage_ = Stage::kCommand;
  return take;
}

bool RequestDecoder::StartCommand(uint8_t byte) {
  std::optional<Command> command = CommandFromWire(dialect_, byte);
  if (!command) {
    return Fail("unknown command byte " + HexByte(byte) +
                (dialect_ == Dialect::kModern  ? " (modern dialect)"
                 : dialect_ == Dialect::kAgent ? " (agent dialect)"
                                               : " (legacy dialect)"));
  }
  if (dialect_ == Dialect::kAgent && !InAgentOrder(*command)) {
    return Fail(std::string(CommandName(*command)) + " out of order in the agent handshake");
  }
  request_.Clear();
  request_.command = *command;
  if (agent_step_ == AgentStep::kReady && dialect_ == Dialect::kAgent &&
      *command != Command::kAgentProof) {
    request_.tag = tag_;
  }
  fields_.Start(RequestProgram(dialect_, *command),
                {&request_.keys, &request_.values, &request_.number, &request_.u32, nullptr});
  stage_ = Stage::kFields;
  return true;
}

// An agent connection is AGENT_HELLO, AGENT_PROOF, then any other command: the server answers
// the proof before anything reaches a table, so nothing can be slipped in ahead of it.
bool RequestDecoder::InAgentOrder(Command command) {
  const bool hello = command == Command::kAgentHello;
  const bool proof = command == Command::kAgentProof;
  switch (agent_step_) {
    case AgentStep::kHello:
      agent_step_ = AgentStep::kProof;
      return hello;
    case AgentStep::kProof:
      agent_step_ = AgentStep::kReady;
      return proof;
    case AgentStep::kReady:
      return !hello && !proof;
  }
  return false;
}

std::string RequestDecoder::FieldErrorText() const {
  const std::string command = CommandName(request_.command);
  const std::string value = std::to_string(fields_.error_value());
  switch (fields_.error()) {
    case FieldError::kKeyLength:
      return command + ": key length " + value + " exceeds the limit of " +
             std::to_string(limits_.max_key_bytes);
    case FieldError::kValueLength:
      return command + ": value length " + value + " exceeds the limit of " +
             std::to_string(limits_.max_value_bytes);
    case FieldError::kMessageBytes:
      return command + ": request larger than the limit of " +
             std::to_string(limits_.max_request_bytes) + " bytes";
    case FieldError::kCount:
      return command + ": key count " + value + " exceeds the limit of " +
             std::to_string(limits_.max_key_count);
    case FieldError::kNone:
      break;
  }
  return command + ": malformed";
}

void RequestDecoder::Release() {
  Fail("released");
  request_ = Request{};
}

bool RequestDecoder::Fail(std::string reason) {
  stage_ = Stage::kFailed;
  error_ = std::move(reason);
  return false;
}

}  // namespace cpplaunch
