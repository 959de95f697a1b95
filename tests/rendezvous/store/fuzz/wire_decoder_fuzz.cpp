// libFuzzer target for the store's wire decoders and table (built by run_fuzz.sh with
// clang++ -fsanitize=fuzzer,address,undefined).
//
// Input layout: byte 0 picks the read sizes the stream is cut into, byte 1 the reply shape for
// the ReplyDecoder pass; the rest is the byte stream. Checked beyond "no crash": the decoder
// never claims more bytes than it was given, always makes progress, gives the same requests
// however the stream is cut, and a decoded request re-encodes to a stream that decodes to the
// same request. Agent streams (AGENT_HELLO first) are applied to a second table as the server
// does after the handshake, with the agents' commands, and the connection's close (owned keys,
// wills) at the end; every AGENT_PROOF is checked against a fixed nonce.
// Partial frames: what the decoder holds for an unfinished request is bounded by the bytes that
// arrived (as the server charges it to its budget) and is handed over with the request. Wait
// registrations: agent requests run under three connection ids (the server's wait slots), so
// waits share keys and go stale; once every connection closed and no entry is left, the budget
// holds nothing for requests.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/store/agent_handshake.h"
#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/request_decoder.h"
#include "rendezvous/store/wire/tag_framing.h"

namespace {

using cpplaunch::Command;
using cpplaunch::DecodeStatus;
using cpplaunch::Dialect;
using cpplaunch::KvTable;
using cpplaunch::ReplyDecoder;
using cpplaunch::ReplyShape;
using cpplaunch::Request;
using cpplaunch::RequestDecoder;
using cpplaunch::TableEffects;
using cpplaunch::WireLimits;

void Require(bool condition) {
  if (!condition) std::abort();
}

WireLimits SmallLimits() {
  WireLimits limits;
  limits.max_key_bytes = 256;
  limits.max_value_bytes = 4096;
  limits.max_key_count = 64;
  limits.max_request_bytes = 16384;
  return limits;
}

std::string Fingerprint(const Request& request) {
  std::string text = cpplaunch::CommandName(request.command);
  for (const auto& key : request.keys) text += "|k" + std::to_string(key.size()) + ":" + key;
  for (const auto& value : request.values)
    text += "|v" + std::to_string(value.size()) + ":" + value;
  return text + "|" + std::to_string(request.number) + "|" + std::to_string(request.u32) + "|t" +
         std::to_string(request.tag);
}

// Decodes `stream` cut into reads of `cut` bytes (0: one read); applies each request to a
// table. Returns the requests' fingerprints, then "MALFORMED" if it failed.
std::vector<std::string> Decode(std::string_view stream, size_t cut, Dialect* dialect) {
  RequestDecoder decoder(SmallLimits());
  // A small budget, so the fuzzer reaches the refusals, watch caps and sliced requests too.
  cpplaunch::StoreBudget budget({.total_bytes = 64 * 1024,
                                 .max_reply_bytes = 8192,
                                 .max_watches_per_connection = 4,
                                 .max_connection_bytes = 2048});
  KvTable workers(&budget, budget.agent_reserve());
  KvTable agents(&budget);
  uint64_t fed = 0;  // bytes of the request being decoded that arrived so far
  TableEffects effects;
  std::vector<std::string> out;
  // The server's routing (store_server.cpp): the handshake and CLEAR_WORKER_KEYS are its own,
  // everything else goes to the connection's namespace.
  auto apply = [&](Request& request) {
    KvTable& table = decoder.dialect() == Dialect::kAgent ? agents : workers;
    effects.Clear();
    if (request.command == Command::kAgentProof) {
      const std::string nonce(cpplaunch::kAgentNonceBytes, 'n');
      Require(!cpplaunch::AgentProofValid("", nonce, request.values.at(0)) ||
              request.values[0] == cpplaunch::AgentProof("", nonce));
    } else if (request.command == Command::kClearWorkerKeys) {
      const size_t before = workers.num_keys();
      Require(workers.Clear(&effects) >= static_cast<int64_t>(before));
      Require(workers.num_keys() == 0);
    } else {
      const cpplaunch::ConnId conn = &table == &agents ? 1 + request.tag % 3 : 1;
      table.Apply(conn, request, &effects);
      while (effects.more && effects.error.empty()) table.Continue(conn, &effects);
      Require(effects.refused <= !effects.error.empty());
      Require(!table.unfinished(conn));
      if (!effects.error.empty()) table.Disconnect(conn, &effects);
    }
  };
  // The connection closes: its owned keys go, then its wills fire.
  auto close = [&] {
    for (cpplaunch::ConnId conn = 1; conn <= 3; ++conn) agents.Disconnect(conn, &effects);
    workers.Disconnect(1, &effects);
    while (agents.ReleaseSome(4096) || workers.ReleaseSome(4096)) {
    }
    // Every wait is gone with its connection, and with it what the budget held for it.
    Require(agents.wait_entries() == 0 && workers.wait_entries() == 0);
    Require(budget.held() == 0);
  };
  size_t step = cut == 0 ? stream.size() : cut;
  for (size_t at = 0; at < stream.size(); at += step) {
    std::string_view chunk = stream.substr(at, step);
    while (true) {
      auto result = decoder.Feed(chunk);
      Require(result.consumed <= chunk.size());
      chunk.remove_prefix(result.consumed);
      fed += result.consumed;
      // A buffer at most doubles what arrived, and each key or value took an 8-byte prefix.
      Require(decoder.held() <= 2 * fed + cpplaunch::FieldReader::kBlobOverhead * (fed / 8 + 1));
      if (result.status == DecodeStatus::kComplete) {
        Require(decoder.held() == 0);
        fed = 0;
      }
      if (result.status == DecodeStatus::kMalformed) {
        out.push_back("MALFORMED");
        *dialect = decoder.dialect();
        close();
        return out;
      }
      if (result.status == DecodeStatus::kNeedMore) {
        Require(chunk.empty());
        break;
      }
      out.push_back(Fingerprint(decoder.request()));
      apply(decoder.request());
    }
  }
  *dialect = decoder.dialect();
  close();
  return out;
}

void CheckRoundTrip(std::string_view stream, Dialect dialect) {
  if (dialect == Dialect::kUndecided) return;
  RequestDecoder decoder(SmallLimits());
  std::string reencoded;
  while (!stream.empty()) {
    auto result = decoder.Feed(stream);
    stream.remove_prefix(result.consumed);
    if (result.status != DecodeStatus::kComplete) break;
    // An agent connection's requests after the handshake are re-encoded behind their tags.
    const Request& request = decoder.request();
    const bool tagged = dialect == Dialect::kAgent && request.command != Command::kAgentHello &&
                        request.command != Command::kAgentProof;
    Require(tagged ? cpplaunch::EncodeTaggedRequest(request.tag, request, &reencoded)
                   : cpplaunch::EncodeRequest(dialect, request, &reencoded));
  }
  RequestDecoder again(SmallLimits());
  std::string_view rest(reencoded);
  while (!rest.empty()) {
    auto result = again.Feed(rest);
    rest.remove_prefix(result.consumed);
    Require(result.status == DecodeStatus::kComplete);
  }
}

void FuzzReply(std::string_view stream, uint8_t shape_byte) {
  ReplyDecoder decoder(SmallLimits());
  auto shape = static_cast<ReplyShape>(shape_byte % 9);
  decoder.Expect(shape, shape_byte / 9 % 4);
  while (!stream.empty()) {
    auto result = decoder.Feed(stream);
    Require(result.consumed <= stream.size());
    stream.remove_prefix(result.consumed);
    if (result.status != DecodeStatus::kComplete) break;
    decoder.Expect(shape, shape_byte / 9 % 4);
    if (result.consumed == 0) break;  // kNone completes without input
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
  size_t cut = data[0] % 17;  // 0 = whole stream, else reads of 1..16 bytes
  Dialect dialect = Dialect::kUndecided;
  auto whole = Decode(stream, 0, &dialect);
  Dialect cut_dialect = Dialect::kUndecided;
  Require(Decode(stream, cut, &cut_dialect) == whole);
  Require(cut_dialect == dialect);
  CheckRoundTrip(stream, dialect);
  FuzzReply(stream, data[1]);
  return 0;
}
