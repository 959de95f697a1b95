#include "rendezvous/store/store_budget.h"

#include <algorithm>
#include <cstdio>

namespace cpplaunch {

// Subtractions, never sums: a hostile size near 2^64 must not wrap around the limit.
bool StoreBudget::CanStore(uint64_t bytes, uint64_t keep_free) const {
  const uint64_t limit = store_limit() - std::min(keep_free, store_limit());
  return used() <= limit && bytes <= limit - used();
}

uint64_t StoreBudget::request_ceiling() const {
  return std::min(limits_.max_connection_bytes, store_limit() - agent_reserve());
}

bool StoreBudget::CanQueue(uint64_t bytes) const {
  return used() <= limits_.total_bytes && bytes <= limits_.total_bytes - used();
}

void StoreBudget::RemoveStored(uint64_t bytes) { stored_ -= bytes < stored_ ? bytes : stored_; }

void StoreBudget::RemoveQueued(uint64_t bytes) { queued_ -= bytes < queued_ ? bytes : queued_; }

void StoreBudget::RemoveHeld(uint64_t bytes) { held_ -= bytes < held_ ? bytes : held_; }

std::string StoreBudget::Describe() const {
  return "the store's memory budget of " + ByteSize(limits_.total_bytes) + " (" +
         ByteSize(stored_) + " stored, " + ByteSize(held_) + " held for requests, " +
         ByteSize(queued_) + " queued output)";
}

std::string ByteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace cpplaunch
