// OwnerTable alone, and CLAIM / WILL / CANCEL_WILLS / ARM / Clear through the KvTable that keeps
// it.

#include "rendezvous/store/owner_table.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "rendezvous/store/kv_table.h"
#include "rendezvous/store/store_budget.h"
#include "rendezvous/store/wire/reply_codec.h"

namespace cpplaunch {
namespace {

using namespace std::string_literals;

Request Make(Command command, std::vector<std::string> keys = {}, std::vector<Bytes> values = {}) {
  Request request;
  request.command = command;
  request.keys = std::move(keys);
  request.values = std::move(values);
  return request;
}

// Applies a request and returns the reply bytes.
std::string Apply(KvTable& table, ConnId conn, Request request, TableEffects* effects) {
  table.Apply(conn, request, effects);
  return effects->reply;
}

std::string Bytes8(int64_t value) {
  std::string bytes;
  EncodeI64(value, &bytes);
  return bytes;
}

std::string Value(std::string_view value) {
  std::string bytes;
  EncodeBytes(value, &bytes);
  return bytes;
}

TEST_CASE("OwnerTable: owned keys and wills per connection", "[rendezvous][owners]") {
  OwnerTable owners;
  owners.Own(1, "a");
  owners.Own(1, "b");
  owners.Own(2, "c");
  owners.Release("b");
  CHECK(owners.TakeOwned(1) == std::vector<std::string>{"a"});
  CHECK(owners.TakeOwned(1).empty());
  CHECK(owners.owned_count() == 1);
  owners.ReleaseAll();
  CHECK(owners.TakeOwned(2).empty());

  CHECK(owners.AddWill(1, "end", "first"));
  CHECK(owners.AddWill(1, "end", "second"));  // replaces: still one will
  for (int i = 1; i < static_cast<int>(OwnerTable::kMaxWills); ++i) {
    CHECK(owners.AddWill(1, "k" + std::to_string(i), "v"));
  }
  CHECK_FALSE(owners.AddWill(1, "one too many", "v"));
  CHECK(owners.AddWill(1, "end", "third"));  // replacing is still allowed at the limit
  auto wills = owners.TakeWills(1);
  REQUIRE(wills.size() == OwnerTable::kMaxWills);
  CHECK(wills[0] == std::pair<std::string, Bytes>{"end", "third"});
  CHECK(owners.TakeWills(1).empty());
  CHECK(owners.AddWill(2, "x", "y"));
  owners.CancelWills(2);
  CHECK(owners.TakeWills(2).empty());
}

TEST_CASE("KvTable CLAIM: first claimant wins; its close deletes only what it still owns",
          "[rendezvous][owners]") {
  KvTable table;
  TableEffects effects;
  CHECK(Apply(table, 1, Make(Command::kClaim, {"rank/0"}, {"one"}), &effects) == Value("one"));
  CHECK(Apply(table, 2, Make(Command::kClaim, {"rank/0"}, {"two"}), &effects) == Value("one"));
  CHECK(Apply(table, 1, Make(Command::kClaim, {"rank/1"}, {"one"}), &effects) == Value("one"));
  // Released by a peer, then claimed by another connection: not 1's any more.
  CHECK(Apply(table, 2, Make(Command::kDeleteKey, {"rank/1"}), &effects) == Bytes8(1));
  CHECK(Apply(table, 3, Make(Command::kClaim, {"rank/1"}, {"three"}), &effects) == Value("three"));
  // A waiter on a claimed key is woken by the claim.
  Apply(table, 4, Make(Command::kWait, {"rank/2"}), &effects);
  Apply(table, 2, Make(Command::kClaim, {"rank/2"}, {"two"}), &effects);
  CHECK(effects.woken == std::vector<ConnId>{4});

  table.Disconnect(1, &effects);
  CHECK_FALSE(table.Find("rank/0"));
  CHECK(table.Find("rank/1") == "three");
  CHECK(table.Find("rank/2") == "two");
  table.Disconnect(3);
  CHECK_FALSE(table.Find("rank/1"));
}

TEST_CASE("KvTable WILL: set at close unless present, after owned keys, waking waiters",
          "[rendezvous][owners]") {
  KvTable table;
  TableEffects effects;
  Apply(table, 1, Make(Command::kClaim, {"member/1"}, {"alive"}), &effects);
  CHECK(Apply(table, 1, Make(Command::kWill, {"member/1"}, {"dead"}), &effects) == "\x00"s);
  CHECK(Apply(table, 1, Make(Command::kWill, {"end"}, {"1 died"}), &effects) == "\x00"s);
  Apply(table, 2, Make(Command::kSet, {"kept"}, {"mine"}), &effects);
  Apply(table, 1, Make(Command::kWill, {"kept"}, {"not applied"}), &effects);
  Apply(table, 3, Make(Command::kWait, {"end"}), &effects);
  CHECK(effects.reply.empty());
  Apply(table, 4, Make(Command::kWill, {"cancelled"}, {"x"}), &effects);
  CHECK(Apply(table, 4, Make(Command::kCancelWills), &effects) == "\x00"s);

  table.Disconnect(1, &effects);
  CHECK(effects.woken == std::vector<ConnId>{3});
  CHECK(table.Find("member/1") == "dead");
  CHECK(table.Find("end") == "1 died");
  CHECK(table.Find("kept") == "mine");
  table.Disconnect(4, &effects);
  CHECK(effects.woken.empty());
  CHECK_FALSE(table.Find("cancelled"));
  // A will fires once: a second disconnect of the same id (reused later) does nothing.
  Apply(table, 2, Make(Command::kDeleteKey, {"end"}), &effects);
  table.Disconnect(1, &effects);
  CHECK_FALSE(table.Find("end"));
}

TEST_CASE("KvTable Clear deletes every key and queue, and tells watchers", "[rendezvous][owners]") {
  KvTable table;
  TableEffects effects;
  for (int i = 0; i < 1000; ++i) {
    Apply(table, 1, Make(Command::kSet, {"/k" + std::to_string(i)}, {"v"}), &effects);
  }
  Apply(table, 1, Make(Command::kQueuePush, {"/q"}, {"m"}), &effects);
  Apply(table, 2, Make(Command::kWatchKey, {"/k7"}), &effects);
  Apply(table, 3, Make(Command::kWait, {"/later"}), &effects);
  effects.Clear();
  CHECK(table.Clear(&effects) == 1001);
  CHECK(table.num_keys() == 0);
  // The entries set aside are freed in slices.
  CHECK(table.ReleaseSome(600));
  CHECK_FALSE(table.ReleaseSome(600));
  CHECK_FALSE(table.ReleaseSome(600));
  REQUIRE(effects.notices.size() == 1);
  CHECK(effects.notices[0].conns == std::vector<ConnId>{2});
  CHECK(static_cast<uint8_t>(effects.notices[0].bytes[0]) == kKeyDeleted);
  CHECK(Apply(table, 1, Make(Command::kQueueLen, {"/q"}), &effects) == Bytes8(0));
  // The pending wait survives and is answered by a later SET.
  CHECK(table.waiting(3));
  Apply(table, 1, Make(Command::kSet, {"/later"}, {"v"}), &effects);
  CHECK(effects.woken == std::vector<ConnId>{3});
}

TEST_CASE("claims, wills and cleared keys are charged to the budget and given back",
          "[rendezvous][owners]") {
  StoreBudget budget;
  KvTable table(&budget);
  TableEffects effects;
  Apply(table, 1, Make(Command::kClaim, {"rank/0"}, {"one"}), &effects);
  Apply(table, 1, Make(Command::kWill, {"end"}, {std::string(1000, 'x')}), &effects);
  const uint64_t held = budget.stored();
  CHECK(held >= 1000 + 2 * StoreBudget::kEntryOverhead);
  Apply(table, 1, Make(Command::kWill, {"end"}, {"short"}), &effects);  // replaces the first
  CHECK(budget.stored() < held);
  Apply(table, 2, Make(Command::kWill, {"x"}, {"y"}), &effects);
  Apply(table, 2, Make(Command::kCancelWills), &effects);
  table.Disconnect(1, &effects);  // the claim goes, the will becomes a stored key
  table.Disconnect(2, &effects);
  REQUIRE(table.Find("end") == "short");
  CHECK(budget.stored() == StoreBudget::EntryCost("end", table.Find("end")->capacity()));
  for (int i = 0; i < 100; ++i) {
    Apply(table, 3, Make(Command::kSet, {"/k" + std::to_string(i)}, {"v"}), &effects);
  }
  Apply(table, 3, Make(Command::kQueuePush, {"/q"}, {"m"}), &effects);
  effects.Clear();
  CHECK(table.Clear(&effects) == 102);
  while (table.ReleaseSome(7)) {
  }
  CHECK(budget.stored() == 0);
}

Request Arm(const std::string& member, int64_t size, std::string will = "died") {
  Request request = Make(Command::kArm, {"end", "hb/" + member, "armed/" + member, "count", "all"},
                         {std::move(will)});
  request.number = size;
  return request;
}

TEST_CASE("KvTable ARM: will, heartbeat, mark and count in one request; all armed at the size",
          "[rendezvous][owners]") {
  KvTable table;
  TableEffects effects;
  Apply(table, 1, Make(Command::kWill, {"earlier"}, {"cancelled by ARM"}), &effects);
  Apply(table, 3, Make(Command::kWait, {"all"}), &effects);
  CHECK(Apply(table, 1, Arm("a", 2, "a died"), &effects) == Bytes8(1));
  CHECK(effects.error.empty());
  CHECK(table.Find("hb/a") == "1");
  CHECK(table.Find("armed/a") == "");
  CHECK(table.Find("count") == "1");
  CHECK_FALSE(table.Find("all"));
  CHECK(effects.woken.empty());
  // The last member to arm sets the all-armed key and wakes its waiters.
  Apply(table, 2, Make(Command::kAdd, {"hb/b"}, {}), &effects);
  CHECK(Apply(table, 2, Arm("b", 2, "b died"), &effects) == Bytes8(2));
  CHECK(table.Find("hb/b") == "1");
  CHECK(table.Find("all") == "");
  CHECK(effects.woken == std::vector<ConnId>{3});
  // Arming again (the next round) replaces the will; a count past the size sets nothing.
  Apply(table, 1, Make(Command::kDeleteKey, {"all"}), &effects);
  CHECK(Apply(table, 1, Arm("a", 2, "a died again"), &effects) == Bytes8(3));
  CHECK(table.Find("hb/a") == "2");
  CHECK_FALSE(table.Find("all"));
  table.Disconnect(1, &effects);
  CHECK(table.Find("end") == "a died again");
  CHECK_FALSE(table.Find("earlier"));
}

TEST_CASE("KvTable ARM: a step that fails closes with the steps before it applied",
          "[rendezvous][owners]") {
  KvTable table;
  TableEffects effects;
  Apply(table, 2, Make(Command::kSet, {"count"}, {"not a number"}), &effects);
  Apply(table, 1, Arm("a", 2, "a died"), &effects);
  CHECK(effects.error.find("not a decimal integer") != std::string::npos);
  CHECK(effects.reply.empty());
  CHECK(table.Find("armed/a") == "");  // applied before the count failed
  table.Disconnect(1, &effects);
  CHECK(table.Find("end") == "a died");  // the will was registered: the round ends
  // A will over the budget refuses the request before anything is written.
  StoreBudget budget(BudgetLimits{.total_bytes = 4096});
  KvTable small(&budget);
  Apply(small, 1, Arm("a", 2, std::string(8192, 'x')), &effects);
  CHECK(effects.refused);
  CHECK(small.num_keys() == 0);
  // A malformed request (not from the decoder) fails without a crash.
  Apply(small, 1, Make(Command::kArm, {"end"}), &effects);
  CHECK(effects.error == "ARM needs 5 keys and 1 value");
}

}  // namespace
}  // namespace cpplaunch
