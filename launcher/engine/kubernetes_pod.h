#pragma once
// In a Kubernetes pod: the conventions beyond torchrun's PET_* variables (which the command
// line reads as options, as torchrun does: Kubeflow's PyTorchJob and TrainJob need nothing
// here). Pure.
//
// LeaderWorkerSet: LWS_LEADER_ADDRESS (the leader pod's name, which hosts the store),
// LWS_GROUP_SIZE (nodes), LWS_WORKER_INDEX (node rank; the leader is 0). The port is not given:
// each pod has its own address, so torchrun's 29500 cannot collide and stays.
// Indexed Job (and JobSet): JOB_COMPLETION_INDEX is the node rank, but the Job says neither the
// node count nor where node 0 is, so it is used only when an endpoint (--master-addr or
// --rdzv-endpoint) is given; the node count then comes from --nnodes.
//
// Detection asks for KUBERNETES_SERVICE_HOST (set in every pod) unless --engine=k8s.

#include "launcher/engine/engine_facts.h"
#include "worker_env/env_map.h"

namespace cpplaunch {

// `endpoint_given`: --master-addr or --rdzv-endpoint (or their PET_ variables) is set.
// `in_pod_required`: false under --engine=k8s.
EngineReading ReadKubernetesPod(const EnvMap& env, bool endpoint_given, bool in_pod_required);

}  // namespace cpplaunch
