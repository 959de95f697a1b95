#pragma once
// A Store decorator that namespaces keys as c10d::PrefixStore does: prefix + "/" + key.
// Stacks (PrefixStore("a", PrefixStore("b", s)) writes "b/a/key"). Same blocking, threading and
// error contract as the wrapped store.

#include <string>
#include <vector>

#include "rendezvous/store/client/store.h"

namespace cpplaunch {

class PrefixStore final : public Store {
 public:
  // `inner` is not owned and must outlive this object.
  PrefixStore(std::string prefix, Store& inner);

  void Set(const std::string& key, const Bytes& value) override;
  Bytes Get(const std::string& key) override;
  int64_t Add(const std::string& key, int64_t delta) override;
  Bytes CompareSet(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool Check(const std::vector<std::string>& keys) override;
  void Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool DeleteKey(const std::string& key) override;
  int64_t NumKeys() override;  // of the whole store, as in c10d

  const std::string& prefix() const { return prefix_; }
  Store& inner() { return inner_; }

 private:
  std::string Join(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> Join(const std::vector<std::string>& keys) const;

  std::string prefix_;
  Store& inner_;
};

}  // namespace cpplaunch
