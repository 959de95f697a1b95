#pragma once
// The bounds every rendezvous record read from the store is checked against (NodeInfo,
// RoundEnd, RendezvousState). A value outside them is refused as unreadable, never used: the
// store is shared with workers and reachable by anyone on its port, and even an agent of
// another build (or a bug) must not make this agent index out of range, allocate without
// bound or compute a negative world size. Generous: no real job comes near them.

#include <cstddef>
#include <cstdint>

namespace cpplaunch::record_limits {

// Workers one agent may run (--nproc-per-node); 2^20.
inline constexpr int64_t kMaxLocalWorldSize = int64_t{1} << 20;
// Agents in one job (--nnodes MAX); 2^20.
inline constexpr int64_t kMaxNodes = int64_t{1} << 20;
// Restarts, rounds and versions only count up from 0.
inline constexpr int64_t kMaxCount = INT32_MAX;
// Text fields, in bytes.
inline constexpr std::size_t kMaxNodeIdBytes = 512;        // "<addr>_<pid>_<random>"
inline constexpr std::size_t kMaxAddrBytes = 256;          // a numeric address, maybe with a scope
inline constexpr std::size_t kMaxHostnameBytes = 1024;     // an FQDN is at most 253
inline constexpr std::size_t kMaxDetailBytes = 16384;      // one line: an error message, a reason
inline constexpr std::size_t kMaxCommandDigestBytes = 64;  // hex: the worker command's digest

}  // namespace cpplaunch::record_limits
