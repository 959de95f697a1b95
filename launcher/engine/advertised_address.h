#pragma once
// Which of this host's addresses an agent advertises to agents on other hosts when it hosts
// the job's store and nobody named its address (under mpirun, rank 0 publishes it through
// PMIx). Pure: the facts about the host are gathered by address_facts.h.
//
// The rule, first that applies:
//   1. The address this host sends from to reach the launcher's own daemon (Open MPI's mpirun,
//      named in OMPI_MCA_orte_hnp_uri): the network the MPI runtime already uses between these
//      hosts, including the interfaces an administrator chose with `--mca oob_tcp_if_include`.
//      A loopback address is kept here: the runtime then runs every process on this host.
//   2. An address the host name resolves to that is one of this host's own, non-loopback
//      interface addresses: what torchrun's users get from `--master-addr=$(hostname)`, minus
//      Debian's `127.0.1.1 <hostname>` line, which peers cannot reach.
//   3. The first non-loopback, non-link-local interface address, IPv4 before IPv6.
//   4. 127.0.0.1: a host with nothing but loopback can only have peers on itself.
// Peers that cannot reach the result need `--master-addr` (or `--rdzv-endpoint`).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpplaunch {

struct AddressFacts {
  // Rule 1's address, numeric; nullopt when the runtime names no daemon or no route leads there.
  std::optional<std::string> toward_launcher;
  // Numeric addresses the host name resolves to, in the resolver's order.
  std::vector<std::string> host_name_addresses;
  // Numeric addresses of this host's interfaces that are up, in getifaddrs order (any kind).
  std::vector<std::string> interface_addresses;
};

// The address to advertise, numeric (IPv6 without brackets).
std::string ChooseAdvertisedAddress(const AddressFacts& facts);

// True for 127.0.0.0/8 and ::1.
bool IsLoopbackAddress(std::string_view numeric);

// The mpirun host's first address in an Open MPI contact URI
// ("3735879680.0;tcp://10.0.0.1,192.168.1.1:45678;tcp6://[fd00::1]:45679"): IPv4 first, then
// IPv6 (without brackets). nullopt when the URI names no TCP address.
std::optional<std::string> LauncherAddressFromOmpiUri(std::string_view uri);

}  // namespace cpplaunch
