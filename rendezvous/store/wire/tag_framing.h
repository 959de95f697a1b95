#pragma once
// The tagged framing of agent connections (docs/store_protocol.md, "Tagged agent requests"):
// after the agent handshake every request is u32 tag | command byte | fields, and every reply
// is u32 tag | reply, the tag being the request's. Replies need not come in request order (a
// WAIT is answered when its keys appear), so one connection carries any number of outstanding
// requests. Requests whose command has no reply (SET, MULTI_SET, APPEND, QUEUE_PUSH) get none,
// tag included. CANCEL_WAIT carries the tag of the WAIT it cancels as its only field (u32).
// Pure: no I/O.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/wire_format.h"

namespace cpplaunch {

inline constexpr size_t kTagBytes = 4;

// Appends `tag` (little-endian u32).
void EncodeTag(uint32_t tag, std::string* out);
// Appends tag | `request` in the agent dialect. False (nothing appended) as EncodeRequest.
bool EncodeTaggedRequest(uint32_t tag, const Request& request, std::string* out);

// Client side: the replies of one agent connection, each read by the shape registered for its
// tag. Not thread-safe; one per connection.
class TaggedReplyDecoder {
 public:
  explicit TaggedReplyDecoder(WireLimits limits = {}) : decoder_(limits) {}

  // The reply to the request sent with `tag` will be of `shape` (count: kBytesList's values).
  // A tag must not be expected twice at once.
  void Expect(uint32_t tag, ReplyShape shape, uint64_t count = 0);
  bool expecting(uint32_t tag) const { return expected_.count(tag) != 0; }
  size_t expected() const { return expected_.size(); }

  // kComplete: one reply is complete (tag(), reply()) and its tag is no longer expected;
  // kNeedMore: everything was consumed; kMalformed: a reply was malformed, or its tag was not
  // expected (error()), and the decoder stays failed. Call again with the rest.
  DecodeResult Feed(std::string_view input);
  uint32_t tag() const { return tag_; }
  Reply& reply() { return decoder_.reply(); }
  const std::string& error() const { return error_; }

 private:
  struct Shape {
    ReplyShape shape;
    uint64_t count;
  };
  ReplyDecoder decoder_;
  std::unordered_map<uint32_t, Shape> expected_;
  char tag_bytes_[kTagBytes] = {};
  size_t tag_size_ = 0;
  bool in_reply_ = false;  // the tag was read; the reply's fields are being decoded
  bool failed_ = false;
  uint32_t tag_ = 0;
  std::string error_;
};

}  // namespace cpplaunch
