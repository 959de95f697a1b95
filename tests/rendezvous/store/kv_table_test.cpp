#include "rendezvous/store/kv_table.h"

#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <string>

#include "rendezvous/store/wire/reply_codec.h"
#include "rendezvous/store/wire/request_decoder.h"
#include "tests/rendezvous/store/test_bytes.h"

namespace cpplaunch {
namespace {

using test::FromHex;
using test::ToHex;

// Decoders + table, as the server wires them, minus the sockets. Send() returns what every
// connection received, as hex; a closed requester shows as "CLOSED".
class Harness {
 public:
  std::map<ConnId, std::string> Send(ConnId conn, const std::string& hex) {
    std::map<ConnId, std::string> out;
    std::string bytes = FromHex(hex);
    std::string_view input(bytes);
    RequestDecoder& decoder = decoders_[conn];
    while (true) {
      DecodeResult result = decoder.Feed(input);
      input.remove_prefix(result.consumed);
      if (result.status == DecodeStatus::kNeedMore) break;
      if (result.status == DecodeStatus::kMalformed) {
        out[conn] += "CLOSED";
        break;
      }
      table_.Apply(conn, decoder.request(), &effects_);
      if (!effects_.error.empty()) {
        last_error_ = effects_.error;
        out[conn] += "CLOSED";
        table_.Disconnect(conn);
        break;
      }
      out[conn] += effects_.reply;
      for (ConnId woken : effects_.woken) out[woken] += std::string(1, '\0');
      for (auto& notice : effects_.notices) {
        for (ConnId watcher : notice.conns) out[watcher] += notice.bytes;
      }
    }
    std::map<ConnId, std::string> received;
    for (auto& [id, text] : out) {
      if (!text.empty()) received[id] = text.ends_with("CLOSED") ? text : ToHex(text);
    }
    return received;
  }
  // What `conn` received from one request (and nobody else did).
  std::string Reply(ConnId conn, const std::string& hex) {
    auto out = Send(conn, hex);
    std::string mine = out[conn];
    out.erase(conn);
    CHECK(out.empty());
    return mine;
  }
  std::string Set(ConnId conn, const std::string& key, const std::string& value) {
    return Encoded(conn, Dialect::kLegacy, Command::kSet, {key}, {value});
  }
  std::string Encoded(ConnId conn, Dialect dialect, Command command, std::vector<std::string> keys,
                      std::vector<Bytes> values = {}, int64_t number = 0) {
    Request request;
    request.command = command;
    request.keys = std::move(keys);
    request.values = std::move(values);
    request.number = number;
    std::string bytes;
    REQUIRE(EncodeRequest(dialect, request, &bytes));
    auto out = Send(conn, ToHex(bytes));
    return out[conn];
  }
  std::map<ConnId, std::string> SendEncoded(ConnId conn, Dialect dialect, Command command,
                                            std::vector<std::string> keys,
                                            std::vector<Bytes> values = {}) {
    Request request;
    request.command = command;
    request.keys = std::move(keys);
    request.values = std::move(values);
    std::string bytes;
    REQUIRE(EncodeRequest(dialect, request, &bytes));
    return Send(conn, ToHex(bytes));
  }
  KvTable& table() { return table_; }
  const std::string& last_error() const { return last_error_; }

 private:
  KvTable table_;
  TableEffects effects_;
  std::map<ConnId, RequestDecoder> decoders_;
  std::string last_error_;
};

const char* kValidate = "00 ce f7 85 3c";

TEST_CASE("KvTable answers the legacy 1.13 vectors byte for byte", "[rendezvous][table]") {
  Harness h;
  const ConnId c = 1, other = 2, watcher = 3;
  CHECK(h.Reply(c, "00 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 00 00 00 00 76 61 6c")
            .empty());
  CHECK(h.Reply(c, "05 01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79") == "00");
  CHECK(h.Reply(c, "02 04 00 00 00 00 00 00 00 2f 6b 65 79") == "03 00 00 00 00 00 00 00 76 61 6c");
  const char* add_init = "03 05 00 00 00 00 00 00 00 69 6e 69 74 2f 01 00 00 00 00 00 00 00";
  CHECK(h.Reply(c, add_init) == "01 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, add_init) == "02 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "02 05 00 00 00 00 00 00 00 69 6e 69 74 2f") == "01 00 00 00 00 00 00 00 32");
  CHECK(h.Reply(c,
                "01 04 00 00 00 00 00 00 00 2f 63 61 73 00 00 00 00 00 00 00 00 01 00 00 00 "
                "00 00 00 00 41") == "01 00 00 00 00 00 00 00 41");
  CHECK(h.Reply(c,
                "01 04 00 00 00 00 00 00 00 2f 63 61 73 01 00 00 00 00 00 00 00 41 01 00 00 "
                "00 00 00 00 00 42") == "01 00 00 00 00 00 00 00 42");
  CHECK(h.Reply(c,
                "01 04 00 00 00 00 00 00 00 2f 63 61 73 01 00 00 00 00 00 00 00 5a 01 00 00 "
                "00 00 00 00 00 43") == "01 00 00 00 00 00 00 00 42");
  CHECK(h.Reply(c,
                "01 04 00 00 00 00 00 00 00 2f 6e 6f 6e 01 00 00 00 00 00 00 00 5a 01 00 00 "
                "00 00 00 00 00 43") == "01 00 00 00 00 00 00 00 5a");
  CHECK(h.Reply(c,
                "04 02 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79 04 00 00 00 "
                "00 00 00 00 2f 6e 6f 6e") == "01");
  CHECK(h.Reply(c, "06") == "03 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "08 04 00 00 00 00 00 00 00 2f 6b 65 79") == "01 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "08 04 00 00 00 00 00 00 00 2f 6b 65 79") == "00 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "05 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 78").empty());
  auto set_x = h.Send(other, "00 02 00 00 00 00 00 00 00 2f 78 01 00 00 00 00 00 00 00 31");
  CHECK(set_x == std::map<ConnId, std::string>{{c, "00"}});
  CHECK(h.Reply(watcher, "07 03 00 00 00 00 00 00 00 2f 77 6b") == "03");
  auto set_wk = h.Send(c, "00 03 00 00 00 00 00 00 00 2f 77 6b 02 00 00 00 00 00 00 00 76 31");
  CHECK(set_wk == std::map<ConnId, std::string>{
                      {watcher,
                       "01 03 00 00 00 00 00 00 00 2f 77 6b 00 00 00 00 00 00 00 00 02 "
                       "00 00 00 00 00 00 00 76 31"}});
}

TEST_CASE("KvTable answers the modern vectors byte for byte", "[rendezvous][table]") {
  Harness h;
  const ConnId c = 0;
  CHECK(h.Reply(c, kValidate).empty());
  CHECK(h.Reply(c, "0d 39 30 00 00") == "39 30 00 00");
  CHECK(h.Reply(c, "04 05 00 00 00 00 00 00 00 69 6e 69 74 2f 01 00 00 00 00 00 00 00") ==
        "01 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "01 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 00 00 00 00 76 61 6c")
            .empty());
  CHECK(h.Reply(c, "06 01 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79") == "00");
  CHECK(h.Reply(c, "03 04 00 00 00 00 00 00 00 2f 6b 65 79") == "03 00 00 00 00 00 00 00 76 61 6c");
  CHECK(h.Reply(c,
                "05 02 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 2f 6b 65 79 03 00 00 00 "
                "00 00 00 00 2f 6e 6f") == "01");
  CHECK(h.Reply(c, "07") == "02 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "08 04 00 00 00 00 00 00 00 2f 6b 65 79") == "01 00 00 00 00 00 00 00");
  CHECK(h.Reply(c,
                "02 02 00 00 00 00 00 00 00 2f 63 00 00 00 00 00 00 00 00 01 00 00 00 00 00 "
                "00 00 41") == "01 00 00 00 00 00 00 00 41");
  CHECK(h.Reply(c, "09 02 00 00 00 00 00 00 00 2f 6c 02 00 00 00 00 00 00 00 78 79").empty());
  CHECK(h.table().Find("/l") == Bytes("xy"));
  CHECK(h.Reply(c,
                "0b 02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61 01 00 00 00 00 00 "
                "00 00 31 02 00 00 00 00 00 00 00 2f 62 01 00 00 00 00 00 00 00 32")
            .empty());
  CHECK(h.Reply(c,
                "0a 02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61 02 00 00 00 00 00 "
                "00 00 2f 62") == "01 00 00 00 00 00 00 00 31 01 00 00 00 00 00 00 00 32");
  CHECK(h.Reply(c, "06 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 78").empty());
  CHECK(h.Reply(c, "0c") == "01");
  CHECK(h.Reply(c, "0e 02 00 00 00 00 00 00 00 2f 71 01 00 00 00 00 00 00 00 6d").empty());
  CHECK(h.Reply(c, "10 02 00 00 00 00 00 00 00 2f 71") == "01 00 00 00 00 00 00 00");
  CHECK(h.Reply(c, "0f 02 00 00 00 00 00 00 00 2f 71") ==
        "01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 6d");
  CHECK(h.Reply(c, "0f 02 00 00 00 00 00 00 00 2f 71") == "00 00 00 00 00 00 00 00");

  Harness fresh;
  fresh.Reply(c, kValidate);
  fresh.Reply(c, "01 02 00 00 00 00 00 00 00 2f 61 00 00 00 00 00 00 00 00");
  CHECK(fresh.Reply(c, "11") == "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 2f 61");
  const char* barrier = "12 04 00 00 00 00 00 00 00 2f 62 61 72 02 00 00 00 00 00 00 00";
  fresh.Reply(1, kValidate);
  CHECK(fresh.Reply(c, barrier).empty());
  auto second = fresh.Send(1, barrier);
  CHECK(second == std::map<ConnId, std::string>{{0, "00"}, {1, "00"}});
}

TEST_CASE("COMPARE_SET follows the reference, quirks included", "[rendezvous][table]") {
  Harness h;
  auto cas = [&](const std::string& key, const Bytes& expected, const Bytes& desired) {
    Request request;
    request.command = Command::kCompareSet;
    request.keys = {key};
    request.values = {expected, desired};
    TableEffects effects;
    h.table().Apply(1, request, &effects);
    return effects;
  };
  CHECK(ToHex(cas("k", "x", "y").reply) == ToHex(FromHex("01 00 00 00 00 00 00 00") + "x"));
  CHECK_FALSE(h.table().Find("k").has_value());  // "missing + non-empty expected" stores nothing
  h.Encoded(2, Dialect::kLegacy, Command::kWait, {"k"});
  CHECK(cas("k", "", "v").woken == std::vector<ConnId>{2});  // creation wakes (our choice)
  CHECK(cas("k", "zz", "w").reply.substr(8) == "v");         // mismatch: current value
  CHECK(cas("k", "v", "w").reply.substr(8) == "w");
  CHECK(h.table().Find("k") == Bytes("w"));
}

TEST_CASE("ADD parses like stoll, stores decimal text and wraps", "[rendezvous][table]") {
  CHECK(ParseStoll("  -12abc") == -12);
  CHECK(ParseStoll("+7") == 7);
  CHECK(ParseStoll("\t\n 42") == 42);
  CHECK(ParseStoll("9223372036854775807") == std::numeric_limits<int64_t>::max());
  CHECK(ParseStoll("-9223372036854775808") == std::numeric_limits<int64_t>::min());
  CHECK_FALSE(ParseStoll("9223372036854775808").has_value());
  CHECK_FALSE(ParseStoll("abc").has_value());
  CHECK_FALSE(ParseStoll("").has_value());
  CHECK_FALSE(ParseStoll("-").has_value());
  CHECK_FALSE(ParseStoll(std::string_view("\0"
                                          "5",
                                          2))
                  .has_value());

  Harness h;
  auto add = [&](const std::string& key, int64_t delta) {
    return h.Encoded(1, Dialect::kLegacy, Command::kAdd, {key}, {}, delta);
  };
  CHECK(add("n", -5) == "fb ff ff ff ff ff ff ff");
  CHECK(h.table().Find("n") == Bytes("-5"));
  h.Set(1, "m", " 12xyz");
  CHECK(add("m", 1) == "0d 00 00 00 00 00 00 00");
  CHECK(h.table().Find("m") == Bytes("13"));
  h.Set(1, "big", "9223372036854775807");
  CHECK(add("big", 1) == "00 00 00 00 00 00 00 80");
  CHECK(h.table().Find("big") == Bytes("-9223372036854775808"));
  h.Set(1, "text", "hello");
  CHECK(add("text", 1) == "CLOSED");
  CHECK(h.last_error().find("not a decimal integer") != std::string::npos);
  CHECK(h.table().Find("text") == Bytes("hello"));
}

TEST_CASE("GET of a missing key closes the requester", "[rendezvous][table]") {
  Harness h;
  CHECK(h.Encoded(1, Dialect::kLegacy, Command::kGet, {"nope"}) == "CLOSED");
  CHECK(h.Encoded(2, Dialect::kLegacy, Command::kMultiGet, {"nope"}) == "CLOSED");
}

TEST_CASE("WAIT counts missing keys per connection, duplicates twice", "[rendezvous][table]") {
  Harness h;
  h.Set(9, "present", "1");
  CHECK(h.Encoded(1, Dialect::kLegacy, Command::kWait, {"a", "a", "b", "present"}).empty());
  CHECK(h.table().waiting(1));
  CHECK(h.Encoded(2, Dialect::kLegacy, Command::kWait, {"a"}).empty());
  auto after_a = h.SendEncoded(9, Dialect::kLegacy, Command::kSet, {"a"}, {"x"});
  CHECK(after_a == std::map<ConnId, std::string>{{2, "00"}});  // 1 still needs b
  auto after_b = h.SendEncoded(9, Dialect::kLegacy, Command::kSet, {"b"}, {"x"});
  CHECK(after_b == std::map<ConnId, std::string>{{1, "00"}});
  CHECK_FALSE(h.table().waiting(1));
  CHECK(h.Encoded(3, Dialect::kLegacy, Command::kWait, {}) == "00");
  CHECK(h.table().wait_entries() == 0);
}

TEST_CASE("ADD, APPEND and MULTI_SET wake waiters; DELETE_KEY does not re-arm",
          "[rendezvous][table]") {
  Harness h;
  h.Encoded(1, Dialect::kLegacy, Command::kWait, {"c"});
  CHECK(h.SendEncoded(9, Dialect::kLegacy, Command::kAdd, {"c"})[1] == "00");
  h.Encoded(1, Dialect::kLegacy, Command::kWait, {"l"});
  CHECK(h.SendEncoded(9, Dialect::kLegacy, Command::kAppend, {"l"}, {"x"})[1] == "00");
  h.Encoded(1, Dialect::kLegacy, Command::kWait, {"m1", "m2"});
  CHECK(h.SendEncoded(9, Dialect::kLegacy, Command::kMultiSet, {"m1", "m2"}, {"1", "2"})[1] ==
        "00");
  CHECK(h.Encoded(1, Dialect::kLegacy, Command::kDeleteKey, {"c"}) == "01 00 00 00 00 00 00 00");
  CHECK(h.Encoded(1, Dialect::kLegacy, Command::kWait, {"c"}).empty());  // waits again
  CHECK(h.table().waiting(1));
}

TEST_CASE("CANCEL_WAIT answers 01 always and after an earlier STOP_WAITING",
          "[rendezvous][table]") {
  Harness h;
  h.Reply(1, kValidate);
  h.Reply(2, kValidate);
  CHECK(h.Reply(1, "0c") == "01");  // nothing pending
  h.Encoded(1, Dialect::kModern, Command::kWait, {"k"});
  CHECK(h.SendEncoded(2, Dialect::kModern, Command::kSet, {"k"}, {"v"})[1] == "00");
  CHECK(h.Reply(1, "0c") == "01");  // the server queued 00 first, so the client reads 00 01
  h.Encoded(1, Dialect::kModern, Command::kWait, {"j"});
  CHECK(h.Reply(1, "0c") == "01");
  CHECK(h.SendEncoded(2, Dialect::kModern, Command::kSet, {"j"}, {"v"}).empty());  // no stray 00
}

TEST_CASE("a stale legacy wait produces the stray STOP_WAITING of the reference",
          "[rendezvous][table]") {
  Harness h;
  h.Encoded(1, Dialect::kLegacy, Command::kWait, {"late"});
  // The 1.13 client timed out locally and moved on; the server cannot know.
  CHECK(h.Encoded(1, Dialect::kLegacy, Command::kAdd, {"n"}, {}, 42) == "2a 00 00 00 00 00 00 00");
  CHECK(h.SendEncoded(2, Dialect::kLegacy, Command::kSet, {"late"}, {"v"})[1] == "00");
}

TEST_CASE("Disconnect clears waits, and stale entries are swept", "[rendezvous][table]") {
  Harness h;
  for (ConnId conn = 0; conn < 5000; ++conn) {
    h.Encoded(conn, Dialect::kLegacy, Command::kWait, {"never" + std::to_string(conn % 7)});
    h.table().Disconnect(conn);
    // The server's loop sweeps in slices between requests (ReleaseSome).
    while (h.table().ReleaseSome(64)) {
    }
  }
  CHECK(h.table().wait_entries() < 2100);
  h.Encoded(1, Dialect::kLegacy, Command::kWait, {"never1"});
  CHECK(h.SendEncoded(2, Dialect::kLegacy, Command::kSet, {"never1"}, {"v"}) ==
        std::map<ConnId, std::string>{{1, "00"}});
}

TEST_CASE("WATCH_KEY notifies create, update and delete with old and new values",
          "[rendezvous][table]") {
  Harness h;
  CHECK(h.Encoded(7, Dialect::kLegacy, Command::kWatchKey, {"/wk"}) == "03");
  auto created = h.SendEncoded(1, Dialect::kLegacy, Command::kAdd, {"/wk"});
  CHECK(created[7] == ToHex(FromHex("01 03 00 00 00 00 00 00 00") + "/wk" +
                            FromHex("00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00") + "0"));
  auto updated = h.SendEncoded(1, Dialect::kLegacy, Command::kSet, {"/wk"}, {"v2"});
  CHECK(updated[7] ==
        ToHex(FromHex("00 03 00 00 00 00 00 00 00") + "/wk" + FromHex("01 00 00 00 00 00 00 00") +
              "0" + FromHex("02 00 00 00 00 00 00 00") + "v2"));
  auto deleted = h.SendEncoded(1, Dialect::kLegacy, Command::kDeleteKey, {"/wk"});
  CHECK(deleted[7] ==
        ToHex(FromHex("02 03 00 00 00 00 00 00 00") + "/wk" + FromHex("02 00 00 00 00 00 00 00") +
              "v2" + FromHex("00 00 00 00 00 00 00 00")));
  h.table().Disconnect(7);
  CHECK(h.SendEncoded(1, Dialect::kLegacy, Command::kSet, {"/wk"}, {"v3"}).empty());
}

TEST_CASE("queues: WAIT sees a non-empty queue, QUEUE_PUSH wakes one waiter",
          "[rendezvous][table]") {
  Harness h;
  h.Reply(1, kValidate);
  h.Reply(2, kValidate);
  h.Reply(3, kValidate);
  h.Encoded(1, Dialect::kModern, Command::kWait, {"/q"});
  h.Encoded(2, Dialect::kModern, Command::kWait, {"/q"});
  CHECK(h.SendEncoded(3, Dialect::kModern, Command::kQueuePush, {"/q"}, {"a"}) ==
        std::map<ConnId, std::string>{{1, "00"}});
  CHECK(h.SendEncoded(3, Dialect::kModern, Command::kQueuePush, {"/q"}, {"b"}) ==
        std::map<ConnId, std::string>{{2, "00"}});
  CHECK(h.Encoded(3, Dialect::kModern, Command::kCheck, {"/q"}) == "00");
  CHECK(h.Encoded(3, Dialect::kModern, Command::kGetNumKeys, {}) == "00 00 00 00 00 00 00 00");
}

TEST_CASE("BARRIER releases everybody when the last one arrives", "[rendezvous][table]") {
  Harness h;
  for (ConnId c = 0; c < 3; ++c) h.Reply(c, kValidate);
  CHECK(h.Encoded(0, Dialect::kModern, Command::kBarrier, {"/b"}, {}, 3).empty());
  CHECK(h.Encoded(1, Dialect::kModern, Command::kBarrier, {"/b"}, {}, 3).empty());
  auto last = h.SendEncoded(2, Dialect::kModern, Command::kBarrier, {"/b"}, {});
  // (SendEncoded sends number 0: a world size already reached)
  CHECK(last == std::map<ConnId, std::string>{{0, "00"}, {1, "00"}, {2, "00"}});
  CHECK(h.table().Find("/b") == Bytes("3"));
}

}  // namespace
}  // namespace cpplaunch
