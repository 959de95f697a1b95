#include "rendezvous/store/client/prefix_store.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "rendezvous/store/client/store_client.h"
#include "tests/rendezvous/store/loopback_server.h"

namespace cpplaunch {
namespace {

using namespace std::chrono_literals;
using test::LoopbackServer;

StoreClientOptions For(const LoopbackServer& server) {
  StoreClientOptions options;
  options.port = server.port();
  options.timeout = 5s;
  options.connect_timeout = 5s;
  return options;
}

TEST_CASE("PrefixStore joins prefix and key with '/' and stacks", "[rendezvous][client]") {
  LoopbackServer server;
  StoreClient client(For(server));
  PrefixStore worker("/worker/attempt_0", client);
  PrefixStore pg("default_pg", worker);
  pg.Set("0", "addr");
  CHECK(client.Get("/worker/attempt_0/default_pg/0") == "addr");
  CHECK(pg.Add("count", 2) == 2);
  CHECK(pg.Check({"0", "count"}));
  pg.Wait({"0"}, 1s);
  CHECK(pg.CompareSet("0", "addr", "new") == "new");
  CHECK(pg.Get("0") == "new");
  CHECK(pg.DeleteKey("0"));
  CHECK(pg.NumKeys() == 1);
  auto raw_options = For(server);
  raw_options.key_prefix = "";
  StoreClient raw(raw_options);
  CHECK(raw.Check({"//worker/attempt_0/default_pg/count"}));  // as PyTorch 1.13 writes it
}

}  // namespace
}  // namespace cpplaunch
