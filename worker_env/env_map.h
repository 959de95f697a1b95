#pragma once
// An environment as a value: name -> value. The agent builds one from environ once at
// startup; everything in worker_env/ and launcher/options reads it instead of getenv.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cpplaunch {

using EnvMap = std::map<std::string, std::string>;

// The value of name, or nullopt when it is not set (an empty value is "set").
inline std::optional<std::string> Lookup(const EnvMap& env, std::string_view name) {
  auto it = env.find(std::string(name));
  if (it == env.end()) return std::nullopt;
  return it->second;
}

}  // namespace cpplaunch
