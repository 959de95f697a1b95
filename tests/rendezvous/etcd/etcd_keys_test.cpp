#include "rendezvous/etcd/etcd_keys.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("etcd keys: one job's keys under <prefix>/<run_id>/") {
  EtcdKeys keys("/cpplaunch/rdzv/", "job7");
  CHECK(keys.Run() == "/cpplaunch/rdzv/job7/");
  CHECK(keys.State() == "/cpplaunch/rdzv/job7/state");
  CHECK(keys.Node("10.0.0.2_77") == "/cpplaunch/rdzv/job7/node/10.0.0.2_77");
  CHECK(keys.End(3) == "/cpplaunch/rdzv/job7/r3/end");
  CHECK(keys.Arrival(3, 1) == "/cpplaunch/rdzv/job7/r3/barrier/1");
  CHECK(keys.Arrival(3, 1).starts_with(keys.Barrier(3)));
  CHECK(EtcdKeys("/p", "j").Run() == EtcdKeys("/p//", "j").Run());
}

TEST_CASE("etcd keys: the join queue's keys, each agent's apart from the state") {
  EtcdKeys keys("/p", "j");
  CHECK(keys.Join("a_1") == "/p/j/join/a_1");
  CHECK(keys.Join("a_1").starts_with(keys.Joins()));
  CHECK(keys.Answer("a_1") == "/p/j/inbox/a_1/answer");
  CHECK(keys.EpochStep("a_1") == "/p/j/inbox/a_1/epoch");
  CHECK(keys.Assignment("a_1") == "/p/j/inbox/a_1/assign");
  // An agent watches its inbox's prefix: its three keys, and no other agent's, not even one whose
  // id starts with its own.
  for (const auto& key : {keys.Answer("a_1"), keys.EpochStep("a_1"), keys.Assignment("a_1")}) {
    CHECK(key.starts_with(keys.Inbox("a_1")));
    CHECK_FALSE(key.starts_with(keys.Inbox("a_")));
  }
  CHECK_FALSE(keys.Answer("a_12").starts_with(keys.Inbox("a_1")));
  // The watched keys are not prefixes of one another's: a watch of one never sees the other.
  CHECK_FALSE(keys.Summary().starts_with(keys.State()));
  CHECK(keys.Admitter() == "/p/j/admitter");
}

TEST_CASE("etcd keys: the etcdctl command that clears a run deletes exactly its prefix") {
  CHECK(EtcdKeys("/cpplaunch/rdzv", "job7").ClearCommand("h1:2379,h2:2379") ==
        "etcdctl --endpoints=h1:2379,h2:2379 del --prefix /cpplaunch/rdzv/job7/");
}

TEST_CASE("etcd keys: a node id is read back from its record's key only") {
  EtcdKeys keys("/p", "j");
  CHECK(keys.NodeIdOf(keys.Node("a_1")) == "a_1");
  CHECK(keys.NodeIdOf(keys.Nodes()).empty());
  CHECK(keys.NodeIdOf(keys.State()).empty());
  CHECK(keys.NodeIdOf("/p/other/node/a_1").empty());
  // Another job whose id extends this one's is not this job.
  CHECK(EtcdKeys("/p", "j2").Run().starts_with(keys.Run()) == false);
}

}  // namespace
}  // namespace cpplaunch
