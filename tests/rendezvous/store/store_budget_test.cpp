#include "rendezvous/store/store_budget.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/rate_limited_log.h"
#include "rendezvous/store/wire/reply_codec.h"
#include "tests/rendezvous/store/loopback_server.h"

namespace cpplaunch {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

Request Make(Command command, std::vector<std::string> keys, std::vector<Bytes> values = {}) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  return request;
}

// Applies `request` and every slice after it; the effects of all slices, the reply concatenated.
TableEffects ApplyAll(KvTable& table, ConnId conn, Request request, int* slices = nullptr) {
  TableEffects effects;
  TableEffects all;
  table.Apply(conn, request, &effects);
  int count = 1;
  while (true) {
    all.reply += effects.reply;
    all.woken.insert(all.woken.end(), effects.woken.begin(), effects.woken.end());
    all.error = effects.error;
    all.refused = effects.refused;
    if (!effects.more) break;
    table.Continue(conn, &effects);
    ++count;
  }
  if (slices != nullptr) *slices = count;
  return all;
}

TEST_CASE("StoreBudget keeps an output reserve and never wraps", "[rendezvous][budget]") {
  StoreBudget budget(BudgetLimits{.total_bytes = 1600});
  CHECK(budget.CanStore(1500));
  CHECK_FALSE(budget.CanStore(1501));  // 1600 - 1600/16
  budget.AddStored(1500);
  CHECK(budget.CanQueue(100));
  CHECK_FALSE(budget.CanQueue(101));
  CHECK_FALSE(budget.CanStore(1));
  CHECK_FALSE(budget.CanQueue(UINT64_MAX));
  budget.AddQueued(100);
  CHECK(budget.used() == 1600);
  budget.RemoveQueued(1000);  // clamps
  CHECK(budget.queued() == 0);
  budget.RemoveStored(1500);
  CHECK(budget.used() == 0);
  CHECK(ByteSize(12) == "12 B");
  CHECK(ByteSize(1536) == "1.5 KiB");
  CHECK(ByteSize(8 * kMiB) == "8.0 MiB");
  CHECK(ByteSize(uint64_t{1} << 40) == "1.0 TiB");
}

TEST_CASE("the store's refusal lines: at most one a second, the rest counted",
          "[rendezvous][budget]") {
  RateLimitedLog log(std::chrono::seconds(1));  // as the server builds it
  auto t0 = RateLimitedLog::Clock::time_point{} + std::chrono::hours(1);
  CHECK(log.Admit(t0, "a") == "a");
  CHECK_FALSE(log.Admit(t0 + std::chrono::milliseconds(10), "b"));
  CHECK_FALSE(log.Admit(t0 + std::chrono::milliseconds(999), "c"));
  CHECK(log.Admit(t0 + std::chrono::seconds(1), "d") ==
        "d (and 2 more since the last such message)");
  CHECK(log.Admit(t0 + std::chrono::seconds(3), "e") == "e");
}

TEST_CASE("the table refuses what would exceed the budget, and gives it back",
          "[rendezvous][budget]") {
  StoreBudget budget(BudgetLimits{.total_bytes = 32 * kMiB});
  KvTable table(&budget);
  TableEffects effects;
  int stored = 0;
  for (; stored < 10; ++stored) {
    Request set = Make(Command::kSet, {"v" + std::to_string(stored)}, {Bytes(8 * kMiB, 'x')});
    table.Apply(1, set, &effects);
    if (!effects.error.empty()) break;
  }
  CHECK(stored == 3);  // 4 x 8 MiB do not fit 30 MiB
  CHECK(effects.refused);
  CHECK(effects.error.find("storing 8.0 MiB at key 'v3' would exceed the store's memory budget "
                           "of 32.0 MiB") == 0);
  CHECK(table.num_keys() == 3);
  // A MULTI_SET that does not fit stores none of its pairs.
  effects = ApplyAll(
      table, 1,
      Make(Command::kMultiSet, {"m1", "m2"}, {Bytes(4 * kMiB, 'm'), Bytes(4 * kMiB, 'm')}));
  CHECK(effects.refused);
  CHECK_FALSE(table.Find("m1"));
  for (int i = 0; i < stored; ++i) {
    Request del = Make(Command::kDeleteKey, {"v" + std::to_string(i)});
    table.Apply(1, del, &effects);
  }
  CHECK(budget.stored() == 0);
  // Every way to store is charged and released exactly.
  for (Command command : {Command::kSet, Command::kAppend, Command::kAppend}) {
    Request request = Make(command, {"k"}, {Bytes(100, 'a')});
    table.Apply(1, request, &effects);
  }
  Request add = Make(Command::kAdd, {"n"});
  add.number = 5;
  table.Apply(1, add, &effects);
  Request push = Make(Command::kQueuePush, {"q"}, {Bytes(kMiB, 'q')});
  table.Apply(1, push, &effects);
  CHECK(budget.stored() > kMiB);
  for (const char* key : {"k", "n"}) {
    Request del = Make(Command::kDeleteKey, {key});
    table.Apply(1, del, &effects);
  }
  Request pop = Make(Command::kQueuePop, {"q"});
  table.Apply(1, pop, &effects);
  CHECK(budget.stored() == 0);
}

TEST_CASE("MULTI_GET is sized before it is built and streamed in slices", "[rendezvous][budget]") {
  StoreBudget budget(BudgetLimits{.total_bytes = 1024 * kMiB, .max_reply_bytes = 64 * kMiB});
  KvTable table(&budget);
  TableEffects effects;
  Request set = Make(Command::kSet, {"big"}, {Bytes(8 * kMiB, 'b')});
  table.Apply(1, set, &effects);
  // One 8 MiB key named 131,072 times: refused from its size, with nothing built.
  Request attack = Make(Command::kMultiGet, std::vector<std::string>(131072, "big"));
  table.Apply(2, attack, &effects);
  int slices = 0;
  while (effects.more && effects.error.empty()) {
    CHECK(effects.reply.empty());
    table.Continue(2, &effects);
    ++slices;
  }
  CHECK(effects.refused);
  CHECK(effects.reply.empty());
  CHECK(effects.error.find("over the store's reply limit") != std::string::npos);
  CHECK(slices == 0);  // the limit is met at the ninth key
  // Within the limit: the same bytes as built at once, in slices of about a MiB.
  effects = ApplyAll(table, 2, Make(Command::kMultiGet, {"big", "big", "big"}), &slices);
  std::string expected;
  for (int i = 0; i < 3; ++i) EncodeBytes(Bytes(8 * kMiB, 'b'), &expected);
  CHECK(effects.error.empty());
  CHECK(effects.reply == expected);
  CHECK(slices >= 24);
  // A value replaced while it is being sent fails the request rather than mixing two values.
  Request one = Make(Command::kMultiGet, {"big"});
  table.Apply(2, one, &effects);
  REQUIRE(effects.more);
  Request replace = Make(Command::kSet, {"big"}, {Bytes(8 * kMiB, 'c')});
  TableEffects other;
  table.Apply(1, replace, &other);
  table.Continue(2, &effects);
  CHECK(effects.error.find("changed while it was sent") != std::string::npos);
  // A closed connection forgets its unfinished request.
  Request again = Make(Command::kMultiGet, {"big"});
  table.Apply(3, again, &effects);
  CHECK(table.unfinished(3));
  table.Disconnect(3);
  CHECK_FALSE(table.unfinished(3));
}

TEST_CASE("WAIT and CHECK of 131,072 keys run in slices and keep their meaning",
          "[rendezvous][budget]") {
  KvTable table;
  TableEffects effects;
  std::vector<std::string> keys;
  for (int i = 0; i < 131072; ++i) keys.push_back("k" + std::to_string(i));
  int slices = 0;
  CHECK(ApplyAll(table, 1, Make(Command::kCheck, keys), &slices).reply == "\x01");
  CHECK(slices == 1);  // the first key is missing
  Request wait = Make(Command::kWait, keys);
  table.Apply(1, wait, &effects);
  REQUIRE(effects.more);
  // Keys set between slices (the first slice's, all of them) must not wake the waiter early.
  for (int i = 0; i < 4096; ++i) {
    Request set = Make(Command::kSet, {keys[i]}, {"v"});
    TableEffects other;
    table.Apply(2, set, &other);
    CHECK(other.woken.empty());
  }
  slices = 1;
  while (effects.more) {
    table.Continue(1, &effects);
    ++slices;
  }
  CHECK(slices == 32);
  CHECK(effects.reply.empty());
  CHECK(table.waiting(1));
  TableEffects other;
  Request rest = Make(Command::kMultiSet, {}, {});
  for (size_t i = 4096; i < keys.size(); ++i) {
    rest.keys.push_back(keys[i]);
    rest.values.push_back("v");
  }
  other = ApplyAll(table, 2, std::move(rest), &slices);
  CHECK(slices == 31);
  CHECK(other.woken == std::vector<ConnId>{1});
  CHECK_FALSE(table.waiting(1));
  CHECK(ApplyAll(table, 1, Make(Command::kCheck, keys)).reply == std::string(1, '\0'));
}

TEST_CASE("repeated watches collapse; a connection's watches are capped", "[rendezvous][budget]") {
  StoreBudget budget(BudgetLimits{.max_watches_per_connection = 3});
  KvTable table(&budget);
  TableEffects effects;
  for (int i = 0; i < 2000; ++i) {
    Request watch = Make(Command::kWatchKey, {"w"});
    table.Apply(7, watch, &effects);
    REQUIRE(effects.reply == "\x03");
  }
  Request set = Make(Command::kSet, {"w"}, {Bytes(kMiB, 'v')});
  table.Apply(1, set, &effects);
  REQUIRE(effects.notices.size() == 1);
  CHECK(effects.notices[0].conns == std::vector<ConnId>{7});
  CHECK(effects.notices[0].bytes.size() == effects.notices[0].size);
  for (const char* key : {"x", "y"}) {
    Request watch = Make(Command::kWatchKey, {key});
    table.Apply(7, watch, &effects);
    CHECK(effects.error.empty());
  }
  Request fourth = Make(Command::kWatchKey, {"z"});
  table.Apply(7, fourth, &effects);
  CHECK(effects.refused);
  CHECK(effects.error == "watching more than 3 keys on one connection (the store's limit)");
}

TEST_CASE("LIST_KEYS over the reply limit is refused before it is built", "[rendezvous][budget]") {
  StoreBudget budget(BudgetLimits{.max_reply_bytes = 1000});
  KvTable table(&budget);
  TableEffects effects;
  for (int i = 0; i < 40; ++i) {
    Request set = Make(Command::kSet, {"key/" + std::to_string(i)}, {"v"});
    table.Apply(1, set, &effects);
  }
  Request list = Make(Command::kListKeys, {});
  table.Apply(1, list, &effects);
  CHECK(effects.error.empty());
  CHECK(effects.reply.size() < 1000);
  for (int i = 40; i < 80; ++i) {
    Request set = Make(Command::kSet, {"key/" + std::to_string(i)}, {"v"});
    table.Apply(1, set, &effects);
  }
  table.Apply(1, list, &effects);
  CHECK(effects.refused);
  CHECK(effects.reply.empty());
}

TEST_CASE("the server closes a client over the budget with one line, and keeps serving",
          "[rendezvous][budget][server]") {
  std::mutex mutex;
  std::vector<std::string> lines;
  StoreServerOptions options = test::LoopbackServer::Defaults();
  options.budget.total_bytes = 16 * kMiB;
  options.report = [&](const std::string& line) {
    std::lock_guard lock(mutex);
    lines.push_back(line);
  };
  test::LoopbackServer server(options);
  for (int attempt = 0; attempt < 3; ++attempt) {
    test::RawConnection hog(server.port());
    Request set = Make(Command::kSet, {}, {Bytes(4 * kMiB, 'h')});
    std::string bytes;
    for (int i = 0; i < 6; ++i) {
      set.keys = {"hog/" + std::to_string(attempt) + "/" + std::to_string(i)};
      REQUIRE(EncodeRequest(Dialect::kLegacy, set, &bytes));
    }
    try {
      hog.Send(bytes);
    } catch (const std::runtime_error&) {
      // closed while sending: the refusal
    }
    CHECK(hog.ClosedByPeer());
  }
  {
    // Three refusals, each one line at most: one in all when they fall within the log's
    // one-second interval, as on a quiet machine. How the interval folds lines is
    // RateLimitedLog's test, with its own clock; a loaded machine can spread the three
    // attempts over more than a second, which must not fail this one.
    std::lock_guard lock(mutex);
    REQUIRE_FALSE(lines.empty());
    CHECK(lines.size() <= 3);
    for (const auto& line : lines) {
      CHECK(line.find("store: refused SET from 127.0.0.1:") == 0);
      CHECK(line.find("would exceed the store's memory budget of 16.0 MiB") != std::string::npos);
      CHECK(line.find("; connection closed") != std::string::npos);
    }
  }
  test::RawConnection other(server.port());
  std::string get_num_keys;
  REQUIRE(EncodeRequest(Dialect::kLegacy, Make(Command::kGetNumKeys, {}), &get_num_keys));
  other.Send(get_num_keys);
  CHECK(other.Receive(8).size() == 8);
}

}  // namespace
}  // namespace cpplaunch
