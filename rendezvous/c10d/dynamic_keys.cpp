#include "rendezvous/c10d/dynamic_keys.h"

#include "rendezvous/core/rendezvous.h"

namespace cpplaunch {

DynamicKeys::DynamicKeys(const std::string& run_id)
    : run_id_(run_id), base_(rendezvous_keys::Base(run_id) + "dynamic/") {}

std::string DynamicKeys::State() const { return base_ + "state"; }
std::string DynamicKeys::Version(int64_t version) const {
  return base_ + "version/" + std::to_string(version);
}
std::string DynamicKeys::Epoch(int64_t epoch) const {
  return base_ + "epoch/" + std::to_string(epoch);
}
std::string DynamicKeys::Summary() const { return base_ + "summary"; }
std::string DynamicKeys::Ticket() const { return base_ + "ticket"; }
std::string DynamicKeys::Passed() const { return base_ + "passed"; }
std::string DynamicKeys::Turn(int64_t ticket) const {
  return base_ + "turn/" + std::to_string(ticket);
}
std::string DynamicKeys::Node(const std::string& node_id) const {
  return base_ + "node/" + node_id;
}
std::string DynamicKeys::Alive(const std::string& node_id) const {
  return base_ + "alive/" + node_id;
}
std::string DynamicKeys::Queue() const { return base_ + "queue"; }
std::string DynamicKeys::QueuedCount() const { return base_ + "queued"; }
std::string DynamicKeys::AdmittedCount() const { return base_ + "admitted"; }
std::string DynamicKeys::Admitter() const { return base_ + "admitter"; }
std::string DynamicKeys::Answer(const std::string& node_id, int64_t attempt) const {
  return base_ + "answer/" + node_id + "/" + std::to_string(attempt);
}
std::string DynamicKeys::Assign(int64_t round, const std::string& node_id) const {
  return rendezvous_keys::Round(run_id_, round) + "assign/" + node_id;
}
std::string DynamicKeys::Publisher(int64_t round) const {
  return rendezvous_keys::Round(run_id_, round) + "assign_publisher";
}
std::string DynamicKeys::Former(int64_t round) const {
  return rendezvous_keys::Round(run_id_, round) + "former";
}
std::string DynamicKeys::Formed(int64_t round) const {
  return rendezvous_keys::Round(run_id_, round) + "formed";
}

}  // namespace cpplaunch
