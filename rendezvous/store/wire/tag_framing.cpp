#include "rendezvous/store/wire/tag_framing.h"

#include <algorithm>
#include <cstring>

#include "rendezvous/store/wire/field_reader.h"

namespace cpplaunch {

void EncodeTag(uint32_t tag, std::string* out) { EncodeU32(tag, out); }

bool EncodeTaggedRequest(uint32_t tag, const Request& request, std::string* out) {
  std::string body;
  if (!EncodeRequest(Dialect::kAgent, request, &body)) return false;
  EncodeTag(tag, out);
  out->append(body);
  return true;
}

void TaggedReplyDecoder::Expect(uint32_t tag, ReplyShape shape, uint64_t count) {
  expected_[tag] = Shape{shape, count};
}

DecodeResult TaggedReplyDecoder::Feed(std::string_view input) {
  if (failed_) return {DecodeStatus::kMalformed, 0};
  size_t used = 0;
  if (!in_reply_) {
    const size_t take = std::min(input.size(), kTagBytes - tag_size_);
    std::memcpy(tag_bytes_ + tag_size_, input.data(), take);
    tag_size_ += take;
    used += take;
    if (tag_size_ < kTagBytes) return {DecodeStatus::kNeedMore, used};
    tag_size_ = 0;
    tag_ = static_cast<uint32_t>(
        LoadLittleEndian(reinterpret_cast<const uint8_t*>(tag_bytes_), kTagBytes));
    auto it = expected_.find(tag_);
    if (it == expected_.end()) {
      failed_ = true;
      error_ = "a reply with tag " + std::to_string(tag_) + ", which no request carried";
      return {DecodeStatus::kMalformed, used};
    }
    decoder_.Expect(it->second.shape, it->second.count);
    expected_.erase(it);
    in_reply_ = true;
  }
  DecodeResult body = decoder_.Feed(input.substr(used));
  used += body.consumed;
  if (body.status == DecodeStatus::kMalformed) {
    failed_ = true;
    error_ = decoder_.error();
  } else if (body.status == DecodeStatus::kComplete) {
    in_reply_ = false;
  }
  return {body.status, used};
}

}  // namespace cpplaunch
