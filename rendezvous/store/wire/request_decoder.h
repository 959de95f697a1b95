#pragma once
// RequestDecoder (server side): bytes of one connection in, complete Requests out. Detects the
// dialect of the connection from its first bytes, then reads each command byte and runs that
// command's field program (command_table.h) with a FieldReader, which checks every length
// prefix against WireLimits before anything is stored and grows buffers only as bytes arrive.
// A first byte AGENT_HELLO makes an agent connection (agent_handshake.h); the decoder enforces
// its message order, the server checks the proof. After the proof every request of an agent
// connection starts with its u32 tag (tag_framing.h), kept in Request::tag. Pure: no I/O.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rendezvous/store/wire/command_table.h"
#include "rendezvous/store/wire/field_reader.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

// Incremental request decoder for one connection. Not thread-safe; one per connection.
// Memory held is bounded by the limits: a field's buffer grows with the bytes that arrived.
class RequestDecoder {
 public:
  explicit RequestDecoder(WireLimits limits = {});

  // Consumes bytes until one request is complete (kComplete: read it with request()), the input
  // is exhausted (kNeedMore: everything was consumed and kept), or the input is invalid
  // (kMalformed: see error(); the decoder stays failed). Call again with the rest of the input.
  DecodeResult Feed(std::string_view input);

  // The last complete request; valid (and movable-from) until the next Feed().
  Request& request() { return request_; }
  const std::string& error() const { return error_; }
  Dialect dialect() const { return dialect_; }
  // True between requests (no partial request buffered).
  bool idle() const {
    return stage_ == Stage::kCommand || (stage_ == Stage::kTag && tag_size_ == 0);
  }
  // The memory the request being read holds (FieldReader::held()); 0 between requests, once a
  // complete request was handed out.
  uint64_t held() const { return stage_ == Stage::kFields ? fields_.held() : 0; }
  // The failure was a declared length or count over a limit (as opposed to bytes that are not
  // the protocol): the server reports it as a refusal.
  bool over_limit() const {
    return stage_ == Stage::kFailed && fields_.error() != FieldError::kNone;
  }
  // Frees the request buffers; the decoder is failed afterwards (its connection is closing).
  void Release();

 private:
  enum class Stage : uint8_t {
    kDialect,  // first byte was 0: waiting for 5 bytes to tell VALIDATE from legacy SET
    kCommand,
    kTag,  // an agent connection after the handshake: the next request's u32 tag
    kFields,
    kFailed,
  };

  size_t FeedDialect(std::string_view input);
  size_t FeedTag(std::string_view input);
  bool StartCommand(uint8_t byte);
  bool InAgentOrder(Command command);
  bool Fail(std::string reason);
  std::string FieldErrorText() const;

  WireLimits limits_;
  Dialect dialect_ = Dialect::kUndecided;
  Stage stage_ = Stage::kCommand;
  Request request_;
  FieldReader fields_;
  uint8_t first_bytes_[5] = {};  // kDialect: the bytes that arrived so far
  size_t first_size_ = 0;
  uint8_t tag_bytes_[4] = {};  // kTag: the bytes that arrived so far
  size_t tag_size_ = 0;
  uint32_t tag_ = 0;  // the tag of the request being decoded
  enum class AgentStep : uint8_t { kHello, kProof, kReady };
  AgentStep agent_step_ = AgentStep::kHello;  // kAgent: the next message the order allows
  std::string error_;
};

}  // namespace cpplaunch
