// The etcd gateway's JSON, without etcd: requests as etcd 3.4 accepts them and answers as it
// writes them (payloads verified with curl against etcd 3.4.23, ../shared/docs/engines.md 1.3).
#include "etcd_client/etcd_json.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "etcd_client/etcd_error.h"

namespace cpplaunch::etcd {
namespace {

using Json = nlohmann::json;

TEST_CASE("etcd requests encode bytes as base64 and 64-bit integers as strings", "[etcd_json]") {
  CHECK(Json::parse(json::RangeRequest("/a/k", "")) == Json{{"key", "L2Evaw=="}});
  CHECK(Json::parse(json::RangeRequest("/a/", PrefixEnd("/a/"))) ==
        Json{{"key", "L2Ev"}, {"range_end", "L2Ew"}});
  CHECK(Json::parse(json::PutRequest("k", "v", 0)) == Json{{"key", "aw=="}, {"value", "dg=="}});
  CHECK(Json::parse(json::PutRequest("k", "", 4111120156712964619)) ==
        Json{{"key", "aw=="}, {"value", ""}, {"lease", "4111120156712964619"}});
  CHECK(Json::parse(json::LeaseGrantRequest(std::chrono::seconds(10))) == Json{{"TTL", "10"}});
  CHECK(Json::parse(json::LeaseRequest(7)) == Json{{"ID", "7"}});
  CHECK(Json::parse(json::WatchCreateRequest("k", "", 0)) ==
        Json{{"create_request", {{"key", "aw=="}}}});
  CHECK(
      Json::parse(json::WatchCreateRequest("k", "l", 12)) ==
      Json{{"create_request", {{"key", "aw=="}, {"range_end", "bA=="}, {"start_revision", "12"}}}});
}

TEST_CASE("a transaction names its compares' targets and results as etcd's enums", "[etcd_json]") {
  std::string body =
      json::TxnRequest({Compare::Absent("k"), Compare::ModRevision("k", Compare::Op::kEqual, 5),
                        Compare::Version("k", Compare::Op::kGreater, 1),
                        Compare::Value("k", Compare::Op::kNotEqual, "v")},
                       {TxnOp::Put("k", "v", 3)}, {TxnOp::Range("k"), TxnOp::Delete("a", "b")});
  Json expected = {
      {"compare",
       {{{"target", "CREATE"}, {"result", "EQUAL"}, {"key", "aw=="}, {"create_revision", "0"}},
        {{"target", "MOD"}, {"result", "EQUAL"}, {"key", "aw=="}, {"mod_revision", "5"}},
        {{"target", "VERSION"}, {"result", "GREATER"}, {"key", "aw=="}, {"version", "1"}},
        {{"target", "VALUE"}, {"result", "NOT_EQUAL"}, {"key", "aw=="}, {"value", "dg=="}}}},
      {"success", {{{"request_put", {{"key", "aw=="}, {"value", "dg=="}, {"lease", "3"}}}}}},
      {"failure",
       {{{"request_range", {{"key", "aw=="}}}},
        {{"request_delete_range", {{"key", "YQ=="}, {"range_end", "Yg=="}}}}}}};
  CHECK(Json::parse(body) == expected);
}

TEST_CASE("a range answer gives its keys, or nothing for a missing key", "[etcd_json]") {
  RangeResult found = json::ParseRange(R"({"header":{"cluster_id":"1","member_id":"2",
      "revision":"9","raft_term":"2"},"kvs":[{"key":"L2Evaw==","create_revision":"4",
      "mod_revision":"9","version":"3","value":"dg==","lease":"4111120156712964619"}],
      "count":"1"})");
  REQUIRE(found.kvs.size() == 1);
  CHECK(found.revision == 9);
  CHECK(found.count == 1);
  CHECK(found.kvs[0].key == "/a/k");
  CHECK(found.kvs[0].value == "v");
  CHECK(found.kvs[0].create_revision == 4);
  CHECK(found.kvs[0].mod_revision == 9);
  CHECK(found.kvs[0].version == 3);
  CHECK(found.kvs[0].lease == 4111120156712964619);
  RangeResult missing = json::ParseRange(R"({"header":{"revision":"9"}})");
  CHECK(missing.kvs.empty());
  CHECK(missing.count == 0);
  CHECK(missing.revision == 9);
}

TEST_CASE("a transaction's answer: succeeded absent when false, the branch's ranges",
          "[etcd_json]") {
  TxnResult failed = json::ParseTxn(R"({"header":{"revision":"7"},"responses":[
      {"response_range":{"header":{"revision":"7"},"kvs":[{"key":"aw==","value":"dg==",
      "mod_revision":"6"}],"count":"1"}}]})");
  CHECK_FALSE(failed.succeeded);
  CHECK(failed.revision == 7);
  REQUIRE(failed.ranges.size() == 1);
  CHECK(failed.ranges[0].kvs.at(0).value == "v");
  CHECK(failed.ranges[0].kvs.at(0).mod_revision == 6);
  TxnResult succeeded = json::ParseTxn(R"({"header":{"revision":"8"},"succeeded":true,
      "responses":[{"response_put":{"header":{"revision":"8"}}}]})");
  CHECK(succeeded.succeeded);
  CHECK(succeeded.revision == 8);
  CHECK(succeeded.ranges.empty());
}

TEST_CASE("lease answers: the granted id and ttl, a keep-alive without TTL is a lost lease",
          "[etcd_json]") {
  LeaseGrant grant =
      json::ParseLeaseGrant(R"({"header":{"revision":"3"},"ID":"4111120156712964619","TTL":"10"})");
  CHECK(grant.id == 4111120156712964619);
  CHECK(grant.ttl == std::chrono::seconds(10));
  CHECK(json::ParseKeepAlive(R"({"result":{"header":{},"ID":"5","TTL":"10"}})") ==
        std::chrono::seconds(10));
  CHECK(json::ParseKeepAlive(R"({"result":{"header":{},"ID":"5"}})") == std::chrono::seconds(0));
  CHECK(json::ParsePut(R"({"header":{"revision":"12"}})") == 12);
  CHECK(json::ParseDelete(R"({"header":{"revision":"13"},"deleted":"2"})") == 2);
  CHECK(json::ParseDelete(R"({"header":{"revision":"13"}})") == 0);
}

TEST_CASE("watch lines: created, PUT events without a type, DELETE, compaction", "[etcd_json]") {
  WatchMessage created =
      json::ParseWatchMessage(R"({"result":{"header":{"revision":"4"},"created":true}})");
  CHECK(created.created);
  CHECK(created.revision == 4);
  CHECK(created.events.empty());
  WatchMessage events = json::ParseWatchMessage(R"({"result":{"header":{"revision":"6"},
      "events":[{"kv":{"key":"aw==","create_revision":"5","mod_revision":"5","version":"1",
      "value":"dg=="}},{"type":"DELETE","kv":{"key":"aw==","mod_revision":"6"}}]}})");
  REQUIRE(events.events.size() == 2);
  CHECK(events.events[0].kind == WatchEvent::kPut);
  CHECK(events.events[0].kv.value == "v");
  CHECK(events.events[1].kind == WatchEvent::kDelete);
  CHECK(events.events[1].kv.mod_revision == 6);
  WatchMessage compacted = json::ParseWatchMessage(
      R"({"result":{"header":{"revision":"9"},"canceled":true,"compact_revision":"8"}})");
  CHECK(compacted.canceled);
  CHECK(compacted.compact_revision == 8);
  WatchMessage error = json::ParseWatchMessage(
      R"({"error":{"grpc_code":14,"http_code":503,"message":"no leader","http_status":"x"}})");
  CHECK(error.canceled);
  CHECK(error.cancel_reason == "no leader");
}

TEST_CASE("malformed answers are one-line EtcdErrors; error bodies give etcd's message",
          "[etcd_json]") {
  CHECK_THROWS_AS(json::ParseRange("<html>bad gateway</html>"), EtcdError);
  CHECK_THROWS_WITH(json::ParseRange(R"({"kvs":[{"key":"!!"}]})"),
                    "malformed answer from etcd: field 'key' is not base64");
  CHECK_THROWS_WITH(json::ParsePut(R"({"header":{"revision":"x"}})"),
                    "malformed answer from etcd: field 'revision' is not an integer");
  CHECK_THROWS_AS(json::ParseLeaseGrant(R"({"header":{}})"), EtcdError);
  CHECK(json::ErrorMessage(R"({"error":"etcdserver: requested lease not found","code":5,
      "message":"etcdserver: requested lease not found"})") ==
        "etcdserver: requested lease not found");
  CHECK(json::ErrorMessage("404 page\nnot found\n") == "404 page not found");
  CHECK(json::ErrorMessage("") == "(empty answer)");
}

TEST_CASE("PrefixEnd increments the last byte below 0xff", "[etcd_json]") {
  CHECK(PrefixEnd("/a/") == "/a0");
  CHECK(PrefixEnd("a\xff") == "b");
  CHECK(PrefixEnd("\xff\xff") == std::string(1, '\0'));
  CHECK(PrefixEnd("") == std::string(1, '\0'));
}

}  // namespace
}  // namespace cpplaunch::etcd
