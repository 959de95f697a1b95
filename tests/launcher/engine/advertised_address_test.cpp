// The rule for the address an agent advertises (advertised_address.h), case by case, and the
// reading of Open MPI's contact URI.

#include "launcher/engine/advertised_address.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

TEST_CASE("advertised address: the route toward the launcher's daemon wins", "[address]") {
  AddressFacts facts;
  facts.toward_launcher = "10.1.0.5";
  facts.host_name_addresses = {"192.168.7.2"};
  facts.interface_addresses = {"127.0.0.1", "192.168.7.2", "10.1.0.5"};
  CHECK(ChooseAdvertisedAddress(facts) == "10.1.0.5");
  // mpirun restricted to loopback (oob_tcp_if_include lo) runs everything on this host.
  facts.toward_launcher = "127.0.0.1";
  CHECK(ChooseAdvertisedAddress(facts) == "127.0.0.1");
}

TEST_CASE("advertised address: the host name's own non-loopback address next", "[address]") {
  AddressFacts facts;
  // Debian's "127.0.1.1 <hostname>" line comes first and is skipped; an address that is not
  // this host's (a stale hosts entry) is skipped too.
  facts.host_name_addresses = {"127.0.1.1", "203.0.113.9", "192.168.7.2"};
  facts.interface_addresses = {"127.0.0.1", "10.1.0.5", "192.168.7.2"};
  CHECK(ChooseAdvertisedAddress(facts) == "192.168.7.2");
}

TEST_CASE("advertised address: else the first routable interface, IPv4 first", "[address]") {
  AddressFacts facts;
  facts.host_name_addresses = {"127.0.1.1"};
  facts.interface_addresses = {"127.0.0.1", "::1",         "fe80::fc:ff:fe00:1%eth0",
                               "fd00::2",   "169.254.3.3", "192.0.2.2"};
  CHECK(ChooseAdvertisedAddress(facts) == "192.0.2.2");
  facts.interface_addresses = {"127.0.0.1", "::1", "fe80::1%eth0", "fd00::2"};
  CHECK(ChooseAdvertisedAddress(facts) == "fd00::2");
}

TEST_CASE("advertised address: loopback only when nothing else exists", "[address]") {
  AddressFacts facts;
  facts.interface_addresses = {"127.0.0.1", "::1"};
  CHECK(ChooseAdvertisedAddress(facts) == "127.0.0.1");
  CHECK(ChooseAdvertisedAddress(AddressFacts{}) == "127.0.0.1");
}

TEST_CASE("advertised address: loopback addresses", "[address]") {
  CHECK(IsLoopbackAddress("127.0.0.1"));
  CHECK(IsLoopbackAddress("127.0.1.1"));
  CHECK(IsLoopbackAddress("::1"));
  CHECK_FALSE(IsLoopbackAddress("10.127.0.1"));
  CHECK_FALSE(IsLoopbackAddress("fd00::1"));
}

TEST_CASE("advertised address: Open MPI's contact URI", "[address]") {
  CHECK(LauncherAddressFromOmpiUri("819724288.0;tcp://127.0.0.1:34517") == "127.0.0.1");
  CHECK(LauncherAddressFromOmpiUri("812843008.0;tcp://192.0.2.2:33159;tcp6://[fd00::2]:49933") ==
        "192.0.2.2");
  CHECK(LauncherAddressFromOmpiUri("1.0;tcp://10.0.0.1,192.168.1.1:45678") == "10.0.0.1");
  CHECK(LauncherAddressFromOmpiUri("1.0;tcp6://[fd00::2],[fd00::3]:49933") == "fd00::2");
  CHECK(LauncherAddressFromOmpiUri("1.0;tcp6://[fd00::2]:1;tcp://10.0.0.1:2") == "10.0.0.1");
  CHECK_FALSE(LauncherAddressFromOmpiUri("1.0"));
  CHECK_FALSE(LauncherAddressFromOmpiUri(""));
  CHECK_FALSE(LauncherAddressFromOmpiUri("1.0;usock://whatever"));
}

}  // namespace
}  // namespace cpplaunch
