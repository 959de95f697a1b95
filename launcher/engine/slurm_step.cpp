#include "launcher/engine/slurm_step.h"

#include "base/text.h"
#include "launcher/engine/rendezvous_port.h"
#include "launcher/engine/slurm_hostlist.h"
#include "rendezvous/core/segments.h"

namespace cpplaunch {
namespace {

EngineReading BatchNote(const EnvMap& env, const std::string& job) {
  std::string error;
  auto nodes = ReadCount(env, "SLURM_JOB_NUM_NODES", &error);
  if (!nodes) nodes = ReadCount(env, "SLURM_NNODES", &error);
  const std::string n = nodes ? std::to_string(*nodes) : "N";
  EngineReading reading;
  reading.note = "Slurm job " + job +
                 ", but not inside an srun step (no SLURM_STEP_ID or SLURM_STEP_NODELIST): "
                 "nothing detected; to use the job's nodes run srun -N" +
                 n + " --ntasks-per-node=1 cpplaunch ...";
  return reading;
}

// The tasks srun started on this node, from SLURM_STEP_TASKS_PER_NODE (else estimated from
// SLURM_NTASKS); 0 when the variables do not tell.
int TasksHere(const EnvMap& env, int nnodes, int node_id, std::string* error) {
  if (auto text = Lookup(env, "SLURM_STEP_TASKS_PER_NODE")) {
    auto counts = ExpandTasksPerNode(*text, error);
    if (!counts) {
      *error = "SLURM_STEP_TASKS_PER_NODE='" + *text + "': " + *error;
      return 0;
    }
    return node_id < static_cast<int>(counts->size()) ? (*counts)[node_id] : 0;
  }
  // Without the per-node list, more tasks than nodes means some node runs several.
  auto tasks = ReadCount(env, "SLURM_NTASKS", error);
  return tasks ? static_cast<int>((*tasks + nnodes - 1) / nnodes) : 0;
}

}  // namespace

std::optional<std::vector<int>> ExpandTasksPerNode(std::string_view text, std::string* error) {
  std::vector<int> counts;
  for (std::string_view item : Split(text, ',')) {
    const size_t paren = item.find("(x");
    auto count = ToInt(ParsePythonInt(item.substr(0, paren)));
    std::optional<int> repeat = 1;
    if (paren != std::string_view::npos) {
      if (!item.ends_with(')'))
        repeat.reset();
      else
        repeat = ToInt(ParsePythonInt(item.substr(paren + 2, item.size() - paren - 3)));
    }
    if (!count || !repeat || *count < 0 || *repeat < 1 || *repeat > 1 << 20) {
      *error = "'" + std::string(item) + "' is not COUNT or COUNT(xREPEAT)";
      return std::nullopt;
    }
    counts.insert(counts.end(), static_cast<size_t>(*repeat), *count);
  }
  return counts;
}

EngineReading ReadSlurmStep(const EnvMap& env) {
  auto job = Lookup(env, "SLURM_JOB_ID");
  if (!job) return {};
  const char* step_name = Lookup(env, "SLURM_STEP_ID") ? "SLURM_STEP_ID" : "SLURM_STEPID";
  auto step_text = Lookup(env, step_name);
  auto nodelist = Lookup(env, "SLURM_STEP_NODELIST");
  if (!step_text || !nodelist) return BatchNote(env, *job);

  std::string error;
  auto step = ReadCount(env, step_name, &error);
  auto nnodes = ReadCount(env, "SLURM_STEP_NUM_NODES", &error);
  if (!nnodes && error.empty()) nnodes = ReadCount(env, "SLURM_NNODES", &error);
  auto node_id = ReadCount(env, "SLURM_NODEID", &error);
  if (!error.empty()) return EngineReading::Refused("Slurm step: " + error);
  const std::string label = "Slurm step " + *job + "." + *step_text;
  if (!nnodes || !node_id) {
    return EngineReading::Refused(
        label + ": SLURM_STEP_NUM_NODES (or SLURM_NNODES) and SLURM_NODEID must be set");
  }
  auto hosts = ExpandHostlist(*nodelist, &error);
  if (!hosts)
    return EngineReading::Refused(label + ": SLURM_STEP_NODELIST='" + *nodelist + "': " + error);
  if (static_cast<long long>(hosts->size()) != *nnodes || *node_id >= *nnodes) {
    return EngineReading::Refused(
        label + ": SLURM_STEP_NODELIST='" + *nodelist + "' names " + std::to_string(hosts->size()) +
        " hosts, SLURM_STEP_NUM_NODES=" + std::to_string(*nnodes) +
        ", SLURM_NODEID=" + std::to_string(*node_id) + ": the step's variables disagree");
  }
  const int here = TasksHere(env, static_cast<int>(*nnodes), static_cast<int>(*node_id), &error);
  if (!error.empty()) return EngineReading::Refused(label + ": " + error);
  if (here > 1) {
    return EngineReading::Refused(
        label + " runs " + std::to_string(here) +
        " tasks on this node; cpplaunch starts the workers itself and needs one "
        "task per node: srun -N" +
        std::to_string(*nnodes) + " --ntasks-per-node=1 cpplaunch --nproc-per-node=" +
        std::to_string(here) + " ... (or --engine=none to ignore Slurm)");
  }
  EngineFacts facts;
  facts.engine = Engine::kSlurm;
  facts.label = label;
  facts.nnodes = static_cast<int>(*nnodes);
  facts.node_rank = static_cast<int>(*node_id);
  facts.run_id = *job + "." + *step_text;
  facts.rdzv_host = hosts->front();
  facts.rdzv_port = DerivedPort(JobNumber(*job), static_cast<uint64_t>(*step));
  facts.segment = LeafSwitch(env);
  EngineReading reading;
  reading.facts = std::move(facts);
  return reading;
}

std::string LeafSwitch(const EnvMap& env) {
  const std::string address = Lookup(env, "SLURM_TOPOLOGY_ADDR").value_or("");
  const size_t node = address.rfind('.');
  if (node == std::string::npos) return "";
  const std::string_view switches = std::string_view(address).substr(0, node);
  const size_t from = switches.rfind('.');
  const std::string leaf(from == std::string_view::npos ? switches : switches.substr(from + 1));
  return IsSegmentName(leaf) ? leaf : "";
}

}  // namespace cpplaunch
