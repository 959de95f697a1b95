#pragma once
// The vocabulary shared by the TCPStore codec (docs/store_protocol.md): the caps on what a peer
// may declare, the decoded messages (Request, Reply) and the result of feeding bytes to a
// decoder. The pieces that use it:
//   command_table.h    command bytes, reply bytes, and each command's field programs;
//   field_reader.h     the incremental interpreter of field programs both decoders run;
//   request_decoder.h  RequestDecoder (server side: bytes in, Requests out);
//   reply_codec.h      encoders (replies, requests) and ReplyDecoder (client side).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rendezvous/store/wire/command_table.h"

namespace cpplaunch {

using Bytes = std::string;  // values are arbitrary bytes; std::string is a convenient holder

// Caps checked against every length prefix before any byte of the field is stored.
// Defaults are those of PyTorch's libuv server.
struct WireLimits {
  uint64_t max_key_bytes = uint64_t{8} * 1024;
  uint64_t max_value_bytes = uint64_t{8} * 1024 * 1024;
  uint64_t max_key_count = 131072;  // CHECK/WAIT/MULTI_GET keys, MULTI_SET pairs, reply lists
  // All keys and values of one request together (a MULTI_SET of many big values); ours, not
  // PyTorch's.
  uint64_t max_request_bytes = uint64_t{64} * 1024 * 1024;
};

// One decoded request. Which fields are used depends on the command:
//   keys:   SET/GET/ADD/.. key; CHECK/WAIT/MULTI_GET key list; MULTI_SET keys
//   values: SET value; COMPARE_SET {expected, desired}; APPEND/QUEUE_PUSH data; MULTI_SET values
//   number: ADD delta, BARRIER world size
//   u32:    PING nonce, VALIDATE magic, an agent connection's CANCEL_WAIT: the WAIT's tag
//   tag:    an agent connection's request tag (tag_framing.h); 0 elsewhere
struct Request {
  Command command = Command::kGetNumKeys;
  std::vector<std::string> keys;
  std::vector<Bytes> values;
  int64_t number = 0;
  uint32_t u32 = 0;
  uint32_t tag = 0;

  // Lists that grew long (a WAIT of 131,072 keys) are freed rather than kept for the next.
  void Clear() {
    constexpr size_t kKeepEntries = 256;
    if (keys.capacity() > kKeepEntries) keys = {};
    if (values.capacity() > kKeepEntries) values = {};
    keys.clear();
    values.clear();
    number = 0;
    u32 = 0;
    tag = 0;
  }
};

// One decoded reply (see ReplyShape for which fields a shape fills).
struct Reply {
  uint8_t u8 = 0;
  uint32_t u32 = 0;
  int64_t number = 0;
  std::vector<Bytes> values;      // kBytes: 1; kBytesList: count; kQueuePop: 0 or 1;
                                  // kWatchEvent: {old, new}
  std::vector<std::string> keys;  // kKeyList; kWatchEvent: {key}
};

enum class DecodeStatus {
  kNeedMore,
  kComplete,  // one unit is complete: a request (RequestDecoder), a reply (ReplyDecoder) or a
              // field program (FieldReader)
  kMalformed,
};

struct DecodeResult {
  DecodeStatus status;
  size_t consumed;  // bytes of the input used by this call
};

}  // namespace cpplaunch
