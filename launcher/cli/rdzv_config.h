#pragma once
// --rdzv-conf: "key1=value1,key2=value2" parsed as torchrun does, with typed getters that
// read values the way torchrun's RendezvousParameters do. Pure value type.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

class RdzvConfig {
 public:
  RdzvConfig() = default;
  // Surrounding whitespace of the whole text, of keys and of values is stripped; an empty
  // text is an empty config. A key without a value ("k", "k=", "k= ") or an empty key
  // ("=v", "a=1,,b=2") is an error (torchrun: ValueError, exit 1). A repeated key: last
  // wins. Values cannot contain ','.
  static std::optional<RdzvConfig> Parse(std::string_view text, std::string* error);

  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }
  bool Has(std::string_view key) const { return values_.find(key) != values_.end(); }
  std::optional<std::string> Get(std::string_view key) const;
  void Set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }

  // The getters return `fallback` when the key is absent, and nullopt with *error set when
  // it is present but malformed (torchrun's message: "The rendezvous configuration option
  // 'k' does not represent a valid integer value.").
  // Integers as Python's int(): optional sign, decimal digits.
  std::optional<int64_t> GetInt(std::string_view key, int64_t fallback, std::string* error) const;
  // 1/true/t/yes/y and 0/false/f/no/n, case-insensitive.
  std::optional<bool> GetBool(std::string_view key, bool fallback, std::string* error) const;
  // Timeouts (timeout, join_timeout, last_call_timeout, close_timeout, read_timeout,
  // heartbeat_timeout, keep_alive_interval): whole seconds as integers; negative rejected.
  std::optional<std::chrono::seconds> GetSeconds(std::string_view key,
                                                 std::chrono::seconds fallback,
                                                 std::string* error) const;

  friend bool operator==(const RdzvConfig&, const RdzvConfig&) = default;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace cpplaunch
