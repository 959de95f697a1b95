#include "launcher/diagnosis/loopback_hint.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

LoopbackFacts Debian() {
  LoopbackFacts facts;
  facts.hostname = "vm";
  facts.name_addrs = {"127.0.0.1"};
  facts.self_addr = "192.0.2.2";
  facts.interface = "eth0";
  facts.other_hosts = true;
  return facts;
}

const std::string kGlooRefused =
    "Traceback (most recent call last):\n"
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
    "[127.0.0.1]:1935: Connection refused\n";

TEST_CASE("a host name on loopback in a job across hosts is warned about with the fix") {
  CHECK(LoopbackWarning(Debian()) ==
        "this host's name vm resolves to 127.0.0.1, which the workers' gloo would give the "
        "other hosts as their address; set GLOO_SOCKET_IFNAME=eth0 (the interface of "
        "192.0.2.2, this host's address in the job) on every host, or map vm to 192.0.2.2 in "
        "/etc/hosts");
  LoopbackFacts unresolved = Debian();
  unresolved.name_addrs.clear();
  CHECK(LoopbackWarning(unresolved)->starts_with("this host's name vm does not resolve"));
  LoopbackFacts debian_127_0_1_1 = Debian();
  debian_127_0_1_1.name_addrs = {"127.0.1.1"};
  CHECK(LoopbackWarning(debian_127_0_1_1));
}

TEST_CASE("no warning for one host or the fix in place or a real address or a loopback job") {
  LoopbackFacts facts = Debian();
  facts.other_hosts = false;
  CHECK_FALSE(LoopbackWarning(facts));
  facts = Debian();
  facts.ifname_set = true;
  CHECK_FALSE(LoopbackWarning(facts));
  facts = Debian();
  facts.name_addrs = {"192.0.2.2", "127.0.0.1"};
  CHECK_FALSE(LoopbackWarning(facts));
  facts = Debian();
  facts.self_addr = "127.0.0.1";  // every agent on this host
  CHECK_FALSE(LoopbackWarning(facts));
}

TEST_CASE("gloo's refused connect to a loopback address is named again in a job across hosts") {
  CHECK(RefusedLoopbackConnect({"", kGlooRefused}) == "127.0.0.1:1935");
  CHECK(RefusedLoopbackConnect({"connect [::1]:29500: Connection refused"}) == "::1:29500");
  CHECK(RefusedLoopbackConnect({"connect [192.0.2.3]:1935: Connection refused"}).empty());
  CHECK(RefusedLoopbackConnect({"connect [127.0.0.1]:1935: Connection timed out"}).empty());
  CHECK(LoopbackConnectHint({kGlooRefused}, Debian()) ==
        "a worker's gloo connect to 127.0.0.1:1935 was refused: a worker on another host "
        "advertised a loopback address (its host name resolves to one, as in Debian's "
        "/etc/hosts); set GLOO_SOCKET_IFNAME to the job network's interface on every host "
        "(here: eth0)");
  LoopbackFacts single = Debian();
  single.other_hosts = false;
  CHECK_FALSE(LoopbackConnectHint({kGlooRefused}, single));
  CHECK(RefusedLoopbackConnect({"connect [::ffff:127.0.1.1]:80: Connection refused"}) ==
        "::ffff:127.0.1.1:80");
  CHECK(RefusedLoopbackConnect({"connect [10.127.0.1]:80: Connection refused"}).empty());
}

}  // namespace
}  // namespace cpplaunch
