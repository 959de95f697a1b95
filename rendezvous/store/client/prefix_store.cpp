#include "rendezvous/store/client/prefix_store.h"

#include <utility>

namespace cpplaunch {

PrefixStore::PrefixStore(std::string prefix, Store& inner)
    : prefix_(std::move(prefix)), inner_(inner) {}

std::vector<std::string> PrefixStore::Join(const std::vector<std::string>& keys) const {
  std::vector<std::string> joined;
  joined.reserve(keys.size());
  for (const auto& key : keys) joined.push_back(Join(key));
  return joined;
}

void PrefixStore::Set(const std::string& key, const Bytes& value) { inner_.Set(Join(key), value); }
Bytes PrefixStore::Get(const std::string& key) { return inner_.Get(Join(key)); }
int64_t PrefixStore::Add(const std::string& key, int64_t delta) {
  return inner_.Add(Join(key), delta);
}
Bytes PrefixStore::CompareSet(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return inner_.CompareSet(Join(key), expected, desired);
}
bool PrefixStore::Check(const std::vector<std::string>& keys) { return inner_.Check(Join(keys)); }
void PrefixStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  inner_.Wait(Join(keys), timeout);
}
bool PrefixStore::DeleteKey(const std::string& key) { return inner_.DeleteKey(Join(key)); }
// The protocol has no per-prefix count (GETNUMKEYS counts the whole store), and c10d's
// PrefixStore forwards the call unchanged as well.
int64_t PrefixStore::NumKeys() { return inner_.NumKeys(); }

}  // namespace cpplaunch
