#include "launcher/status_tool/crawl_frontier.h"

#include <catch2/catch.hpp>

#include "launcher/status_tool/host_probe.h"

using cpplaunch::status::CrawlFrontier;
using cpplaunch::status::CrawlTarget;
using cpplaunch::status::LearnHosts;
using cpplaunch::status::ParseStatusAnswer;
using cpplaunch::status::ReadProbe;

TEST_CASE("CrawlFrontier hands out addresses breadth first, each once", "[status_tool]") {
  CrawlFrontier frontier;
  CHECK(frontier.Add({"a:1", "", {}}));
  CHECK(frontier.Add({"b:1", "b", 1}));
  CHECK_FALSE(frontier.Add({"a:1", "a", 0}));
  CHECK_FALSE(frontier.Add({"", "nameless", 2}));
  auto first = frontier.Next();
  REQUIRE(first);
  CHECK(first->address == "a:1");
  CHECK(frontier.Add({"c:1", "c", 2}));
  CHECK(frontier.Next()->address == "b:1");
  CHECK(frontier.Next()->address == "c:1");
  CHECK_FALSE(frontier.Next());
  CHECK_FALSE(frontier.complete());
  frontier.Finished();
  frontier.Finished();
  frontier.Finished();
  CHECK(frontier.complete());
}

TEST_CASE("CrawlFrontier keeps at most max_in_flight addresses out", "[status_tool]") {
  CrawlFrontier frontier(100, 2);
  for (const char* address : {"a:1", "b:1", "c:1"}) frontier.Add({address, "", {}});
  CHECK(frontier.Next());
  CHECK(frontier.Next());
  CHECK_FALSE(frontier.Next());
  frontier.Finished();
  CHECK(frontier.Next()->address == "c:1");
}

TEST_CASE("CrawlFrontier counts the distinct hosts past its bound", "[status_tool]") {
  CrawlFrontier frontier(2, 32);
  CHECK(frontier.Add({"a:1", "", {}}));
  CHECK(frontier.Add({"b:1", "", {}}));
  CHECK_FALSE(frontier.Add({"c:1", "", {}}));
  CHECK_FALSE(frontier.Add({"c:1", "", {}}));
  CHECK_FALSE(frontier.Add({"d:1", "", {}}));
  CHECK(frontier.dropped() == 2);
}

TEST_CASE("LearnHosts queues named hosts and not the agent's own address", "[status_tool]") {
  std::string error;
  auto answer = ParseStatusAnswer(
      R"({"schema": 1, "agent": {"status_address": "10.0.0.1:80"},
          "hosts": [{"group_rank": 0, "hostname": "a", "status_address": "10.0.0.1:80",
                     "self": true},
                    {"group_rank": 1, "hostname": "b", "status_address": "10.0.0.2:80"},
                    {"group_rank": 2, "hostname": "c", "status_address": null}]})",
      &error);
  REQUIRE(answer);
  CrawlFrontier frontier;
  frontier.Add({"localhost:80", "", {}});
  frontier.Next();
  LearnHosts(*answer, &frontier);
  auto next = frontier.Next();
  REQUIRE(next);
  CHECK(next->address == "10.0.0.2:80");
  CHECK(next->hostname == "b");
  CHECK(next->group_rank == 1);
  CHECK_FALSE(frontier.Next());
}

TEST_CASE("ReadProbe says why an answer is not a status", "[status_tool]") {
  CrawlTarget target{"a:1", "", {}};
  auto refused = ReadProbe(target, "Connection refused", 0, "");
  CHECK_FALSE(refused.connected);
  CHECK(refused.error == "Connection refused");
  auto missing = ReadProbe(target, "", 404, "");
  CHECK(missing.connected);
  CHECK(missing.error == "answered HTTP 404, not a status document");
  CHECK(ReadProbe(target, "", 200, "hello").error == "answered not JSON");
  auto good = ReadProbe(target, "", 200, R"({"schema": 1})");
  CHECK(good.answer);
  CHECK(good.error.empty());
}
