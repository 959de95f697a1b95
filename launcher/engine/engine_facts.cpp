#include "launcher/engine/engine_facts.h"

#include "base/text.h"

namespace cpplaunch {

const char* EngineName(Engine engine) {
  switch (engine) {
    case Engine::kNone:
      return "none";
    case Engine::kSlurm:
      return "slurm";
    case Engine::kMpi:
      return "mpi";
    case Engine::kKubernetes:
      return "k8s";
  }
  return "none";
}

std::optional<long long> ReadCount(const EnvMap& env, std::string_view name, std::string* error) {
  auto text = Lookup(env, name);
  if (!text) return std::nullopt;
  bool digits = !text->empty() && text->size() <= 18;
  for (char c : *text) digits = digits && IsDigit(c);
  if (!digits) {
    *error = std::string(name) + "='" + *text + "' is not a non-negative integer";
    return std::nullopt;
  }
  return std::stoll(*text);
}

}  // namespace cpplaunch
