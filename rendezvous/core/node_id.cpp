#include "rendezvous/core/node_id.h"

#include <cstdio>

namespace cpplaunch {

std::string NodeIdSuffix(const NodeIdParts& parts) {
  char random[16];
  std::snprintf(random, sizeof random, "%08x", static_cast<unsigned>(parts.random));
  return "_" + std::to_string(parts.pid) + "_" + random;
}

std::string WithAddress(const std::string& node_id, const std::string& addr) {
  if (node_id.empty() || node_id.front() == '_') return addr + node_id;
  return node_id;
}

std::string NodeIdClashMessage(const std::string& run_id, const std::string& node_id,
                               const std::string& where) {
  // The random part makes a chance clash a one-in-four-billion event between two agents that
  // already share an address and a pid: a clash is rather a copied process (a restored
  // checkpoint, a forked agent), and a new agent process draws a new id.
  return "rendezvous failed on " + where + ": another agent of job '" + run_id +
         "' already joined as node " + node_id +
         " (same address, process id and random part: a copy of this agent?); start this agent " +
         "again to draw a new node id";
}

}  // namespace cpplaunch
