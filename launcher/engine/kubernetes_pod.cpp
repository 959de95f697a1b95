#include "launcher/engine/kubernetes_pod.h"

namespace cpplaunch {
namespace {

EngineReading ReadLeaderWorkerSet(const EnvMap& env) {
  const char* const kLabel = "LeaderWorkerSet group";
  auto leader = Lookup(env, "LWS_LEADER_ADDRESS");
  std::string error;
  auto size = ReadCount(env, "LWS_GROUP_SIZE", &error);
  auto index = ReadCount(env, "LWS_WORKER_INDEX", &error);
  if (!error.empty()) return EngineReading::Refused(std::string(kLabel) + ": " + error);
  if (!leader || !size || !index) {
    return EngineReading::Refused(
        std::string(kLabel) +
        ": LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX must all be set");
  }
  if (leader->empty() || *size < 1 || *index >= *size) {
    return EngineReading::Refused(std::string(kLabel) + ": LWS_LEADER_ADDRESS='" + *leader +
                                  "', LWS_GROUP_SIZE=" + std::to_string(*size) +
                                  ", LWS_WORKER_INDEX=" + std::to_string(*index) +
                                  " do not describe a group");
  }
  EngineFacts facts;
  facts.engine = Engine::kKubernetes;
  facts.label = kLabel;
  facts.nnodes = static_cast<int>(*size);
  facts.node_rank = static_cast<int>(*index);
  facts.rdzv_host = *leader;
  EngineReading reading;
  reading.facts = std::move(facts);
  return reading;
}

EngineReading ReadIndexedJob(const EnvMap& env, bool endpoint_given) {
  std::string error;
  auto index = ReadCount(env, "JOB_COMPLETION_INDEX", &error);
  if (!error.empty()) return EngineReading::Refused("Indexed Job: " + error);
  EngineReading reading;
  if (!endpoint_given) {
    reading.note = "Indexed Job pod " + std::to_string(*index) +
                   ": not used without --master-addr or --rdzv-endpoint (the Job does not say "
                   "where node 0 is)";
    return reading;
  }
  EngineFacts facts;
  facts.engine = Engine::kKubernetes;
  facts.label = "Indexed Job pod " + std::to_string(*index);
  facts.node_rank = static_cast<int>(*index);
  reading.facts = std::move(facts);
  return reading;
}

bool AnyLws(const EnvMap& env) {
  return Lookup(env, "LWS_LEADER_ADDRESS") || Lookup(env, "LWS_GROUP_SIZE") ||
         Lookup(env, "LWS_WORKER_INDEX");
}

}  // namespace

EngineReading ReadKubernetesPod(const EnvMap& env, bool endpoint_given, bool in_pod_required) {
  if (in_pod_required && !Lookup(env, "KUBERNETES_SERVICE_HOST")) return {};
  if (AnyLws(env)) return ReadLeaderWorkerSet(env);
  if (Lookup(env, "JOB_COMPLETION_INDEX")) return ReadIndexedJob(env, endpoint_given);
  return {};
}

}  // namespace cpplaunch
