#include "worker_env/env_builder.h"

#include <catch2/catch.hpp>
#include <set>

namespace cpplaunch {
namespace {

JobInfo SampleJob() {
  JobInfo job;
  job.role = "trainer";
  job.master_addr = "10.0.0.1";
  job.master_port = 29500;
  job.restart_count = 2;
  job.max_restarts = 3;
  job.run_id = "job7";
  job.use_agent_store = true;
  job.error_file_for = [](int lr) {
    return "/logs/attempt_2/" + std::to_string(lr) + "/error.json";
  };
  return job;
}

WorkerIdentity SampleWorker() {
  std::string error;
  return ComputeRankLayout(1, std::vector<int>{2, 2}, &error)->workers[1];
}

EnvMap AsMap(const std::vector<std::string>& entries) {
  EnvMap map;
  for (const std::string& e : entries) {
    const size_t eq = e.find('=');
    REQUIRE(eq != std::string::npos);
    REQUIRE(map.emplace(e.substr(0, eq), e.substr(eq + 1)).second);  // no duplicates
  }
  return map;
}

EnvMap Build(const EnvMap& agent, const JobInfo& job, const WorkerIdentity& who) {
  std::string error;
  auto env = BuildWorkerEnv(agent, job, who, &error);
  REQUIRE(env);
  return AsMap(env->entries);
}

TEST_CASE("a worker sees exactly torchrun's variables on top of the agent's environment") {
  const EnvMap agent{{"PATH", "/usr/bin"}, {"HOME", "/root"}, {"OMP_NUM_THREADS", "4"}};
  const EnvMap env = Build(agent, SampleJob(), SampleWorker());
  const EnvMap expected{
      {"PATH", "/usr/bin"},
      {"HOME", "/root"},
      {"OMP_NUM_THREADS", "4"},
      {"LOCAL_RANK", "1"},
      {"RANK", "3"},
      {"GROUP_RANK", "1"},
      {"ROLE_RANK", "3"},
      {"ROLE_NAME", "trainer"},
      {"LOCAL_WORLD_SIZE", "2"},
      {"WORLD_SIZE", "4"},
      {"GROUP_WORLD_SIZE", "2"},
      {"ROLE_WORLD_SIZE", "4"},
      {"MASTER_ADDR", "10.0.0.1"},
      {"MASTER_PORT", "29500"},
      {"TORCHELASTIC_RESTART_COUNT", "2"},
      {"TORCHELASTIC_MAX_RESTARTS", "3"},
      {"TORCHELASTIC_RUN_ID", "job7"},
      {"TORCHELASTIC_USE_AGENT_STORE", "True"},
      {"TORCHELASTIC_ERROR_FILE", "/logs/attempt_2/1/error.json"},
      {"TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGTERM,SIGINT,SIGHUP,SIGQUIT"},
      {"NCCL_ASYNC_ERROR_HANDLING", "1"},
      {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
  };
  CHECK(env == expected);
}

TEST_CASE("entries are NAME=value, sorted, ready for execve") {
  std::string error;
  auto env = BuildWorkerEnv({{"Z", "1"}, {"A", "x=y"}}, SampleJob(), SampleWorker(), &error);
  REQUIRE(env);
  CHECK(std::is_sorted(env->entries.begin(), env->entries.end()));
  CHECK(env->entries.front() == "A=x=y");
}

TEST_CASE("torchrun's variables override inherited ones; NCCL values are kept") {
  const EnvMap agent{{"RANK", "99"},
                     {"MASTER_PORT", "1"},
                     {"NCCL_ASYNC_ERROR_HANDLING", "0"},
                     {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"},
                     {"TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGUSR1"}};
  JobInfo job = SampleJob();
  job.use_agent_store = false;
  job.signals_to_handle = "SIGTERM,SIGUSR1";
  const EnvMap env = Build(agent, job, SampleWorker());
  CHECK(env.at("RANK") == "3");
  CHECK(env.at("MASTER_PORT") == "29500");
  CHECK(env.at("NCCL_ASYNC_ERROR_HANDLING") == "0");
  CHECK(env.at("TORCH_NCCL_ASYNC_ERROR_HANDLING") == "3");
  CHECK(env.at("TORCHELASTIC_USE_AGENT_STORE") == "False");
  CHECK(env.at("TORCHELASTIC_SIGNALS_TO_HANDLE") == "SIGTERM,SIGUSR1");
}

TEST_CASE("an empty error file path is exported as an empty value") {
  JobInfo job = SampleJob();
  job.error_file_for = [](int) { return std::string(); };
  const EnvMap env = Build({}, job, SampleWorker());
  REQUIRE(env.count("TORCHELASTIC_ERROR_FILE") == 1);
  CHECK(env.at("TORCHELASTIC_ERROR_FILE").empty());
}

TEST_CASE("OMP_NUM_THREADS=1 only when unset and more than one local worker") {
  std::string error;
  WorkerIdentity two = SampleWorker();
  WorkerIdentity one = *ComputeRankLayout(0, std::vector<int>{1}, &error)->workers.begin();

  auto defaulted = BuildWorkerEnv({}, SampleJob(), two, &error);
  REQUIRE(defaulted);
  CHECK(defaulted->omp_num_threads_defaulted);
  CHECK(AsMap(defaulted->entries).at("OMP_NUM_THREADS") == "1");
  CHECK(OmpThreadsDefaulted({}, 2));

  auto single = BuildWorkerEnv({}, SampleJob(), one, &error);
  REQUIRE(single);
  CHECK_FALSE(single->omp_num_threads_defaulted);
  CHECK(AsMap(single->entries).count("OMP_NUM_THREADS") == 0);

  auto user_set = BuildWorkerEnv({{"OMP_NUM_THREADS", ""}}, SampleJob(), two, &error);
  REQUIRE(user_set);
  CHECK_FALSE(user_set->omp_num_threads_defaulted);
  CHECK(AsMap(user_set->entries).at("OMP_NUM_THREADS").empty());
}

TEST_CASE("virtual local rank: LOCAL_RANK=0 and one device in CUDA_VISIBLE_DEVICES") {
  JobInfo job = SampleJob();
  job.virtual_local_rank = true;
  const WorkerIdentity who = SampleWorker();  // local rank 1

  EnvMap unset = Build({}, job, who);
  CHECK(unset.at("LOCAL_RANK") == "0");
  CHECK(unset.at("CUDA_VISIBLE_DEVICES") == "1");
  CHECK(unset.at("RANK") == "3");
  CHECK(unset.at("TORCHELASTIC_ERROR_FILE") == "/logs/attempt_2/1/error.json");

  EnvMap mapped = Build({{"CUDA_VISIBLE_DEVICES", "4, 6"}}, job, who);
  CHECK(mapped.at("CUDA_VISIBLE_DEVICES") == "6");

  std::string error;
  CHECK_FALSE(BuildWorkerEnv({{"CUDA_VISIBLE_DEVICES", "4"}}, job, who, &error));
  CHECK(error == "local_rank 1 exceeds available GPUs in CUDA_VISIBLE_DEVICES=4");
}

TEST_CASE("without virtual local rank CUDA_VISIBLE_DEVICES is inherited untouched") {
  EnvMap env = Build({{"CUDA_VISIBLE_DEVICES", "3,2"}}, SampleJob(), SampleWorker());
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "3,2");
  CHECK(env.at("LOCAL_RANK") == "1");
  CHECK(Build({}, SampleJob(), SampleWorker()).count("CUDA_VISIBLE_DEVICES") == 0);
}

TEST_CASE("VirtualVisibleDevice picks the local_rank-th entry, stripped") {
  std::string error;
  CHECK(VirtualVisibleDevice(std::nullopt, 5, &error) == "5");
  CHECK(VirtualVisibleDevice(std::string("GPU-a, GPU-b"), 1, &error) == "GPU-b");
  CHECK(VirtualVisibleDevice(std::string(""), 0, &error) == "");
  CHECK_FALSE(VirtualVisibleDevice(std::string(""), 1, &error));
}

}  // namespace
}  // namespace cpplaunch
