#pragma once
// The store port a detected job uses when none is given: derived from the job's id, so that two
// jobs sharing a node do not both take torchrun's 29500. Pure.
//
//   port = 20000 + (job mod 1000) * 12 + (step mod 12)          (20000..31999)
//
// Jobs whose ids differ by less than 1000 never collide, nor do the first 12 steps of one job.
// The range stays below Linux's ephemeral ports (32768-60999, net.ipv4.ip_local_port_range), so
// an outgoing connection never holds the port, and above the registered services below 20000
// that clusters commonly run.

#include <cstdint>
#include <string_view>

namespace cpplaunch {

inline constexpr int kDerivedPortBase = 20000;
inline constexpr int kDerivedPortEnd = 32000;  // exclusive

int DerivedPort(uint64_t job, uint64_t step);

// For job ids that are not numbers (a PMIx namespace): the decimal value of an all-digit id,
// else its 64-bit FNV-1a hash, as the job number.
uint64_t JobNumber(std::string_view job_id);

}  // namespace cpplaunch
