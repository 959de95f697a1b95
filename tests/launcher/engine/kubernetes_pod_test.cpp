#include "launcher/engine/kubernetes_pod.h"

#include <catch2/catch.hpp>

namespace cpplaunch {
namespace {

const EnvMap kPod{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}};

EnvMap With(EnvMap env, const EnvMap& more) {
  env.insert(more.begin(), more.end());
  return env;
}

// A worker pod of a LeaderWorkerSet of size 4 (kubernetes-sigs/lws API constants).
const EnvMap kLwsWorker = With(kPod, {{"LWS_LEADER_ADDRESS", "train-0.train.default"},
                                      {"LWS_GROUP_SIZE", "4"},
                                      {"LWS_WORKER_INDEX", "2"},
                                      {"LWS_NAME", "train"}});

TEST_CASE("LeaderWorkerSet: group size, worker index and the leader's address") {
  EngineReading reading = ReadKubernetesPod(kLwsWorker, false, true);
  REQUIRE(reading.facts);
  CHECK(reading.facts->engine == Engine::kKubernetes);
  CHECK(reading.facts->label == "LeaderWorkerSet group");
  CHECK(reading.facts->nnodes == 4);
  CHECK(reading.facts->node_rank == 2);
  CHECK(reading.facts->rdzv_host == "train-0.train.default");
  CHECK_FALSE(reading.facts->rdzv_port);  // a pod has its own address: 29500 stays
  CHECK_FALSE(reading.facts->run_id);
}

TEST_CASE("LeaderWorkerSet variables that do not describe a group are refused") {
  EnvMap env = kLwsWorker;
  env.erase("LWS_GROUP_SIZE");
  CHECK(ReadKubernetesPod(env, false, true).refusal ==
        "LeaderWorkerSet group: LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX must all "
        "be set");
  env = kLwsWorker;
  env["LWS_WORKER_INDEX"] = "4";
  CHECK(ReadKubernetesPod(env, false, true).refusal.find("do not describe a group") !=
        std::string::npos);
}

TEST_CASE("Indexed Job: the completion index is the node rank when an endpoint is given") {
  // Pod 3 of an Indexed Job (batch.kubernetes.io/job-completion-index, also in the env).
  const EnvMap env = With(kPod, {{"JOB_COMPLETION_INDEX", "3"}, {"HOSTNAME", "train-3"}});
  EngineReading reading = ReadKubernetesPod(env, /*endpoint_given=*/true, true);
  REQUIRE(reading.facts);
  CHECK(reading.facts->label == "Indexed Job pod 3");
  CHECK(reading.facts->node_rank == 3);
  CHECK(reading.facts->nnodes == 0);  // from --nnodes
  CHECK_FALSE(reading.facts->rdzv_host);

  reading = ReadKubernetesPod(env, /*endpoint_given=*/false, true);
  CHECK_FALSE(reading.facts);
  CHECK(reading.note ==
        "Indexed Job pod 3: not used without --master-addr or --rdzv-endpoint (the Job does not "
        "say where node 0 is)");
}

TEST_CASE("outside a pod the conventions are not read, unless --engine=k8s") {
  EnvMap env = kLwsWorker;
  env.erase("KUBERNETES_SERVICE_HOST");
  CHECK(ReadKubernetesPod(env, false, /*in_pod_required=*/true).absent());
  CHECK(ReadKubernetesPod(env, false, /*in_pod_required=*/false).facts);
  CHECK(ReadKubernetesPod(kPod, true, true).absent());
}

}  // namespace
}  // namespace cpplaunch
