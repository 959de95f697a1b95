#include "launcher/cli/engine_options.h"

#include "base/text.h"
#include "launcher/cli/parse_failure.h"
#include "launcher/cli/rdzv_config.h"
#include "launcher/engine/detect_engine.h"
#include "launcher/engine/mpi_rendezvous_host.h"
#include "rendezvous/core/rendezvous.h"
#include "rendezvous/store/endpoint.h"

namespace cpplaunch {
namespace {

bool Given(const RawValues& raw, OptionId id) { return raw.count(id) != 0; }

std::string TextOr(const RawValues& raw, OptionId id) {
  auto it = raw.find(id);
  return it == raw.end() ? std::string(SpecFor(id).default_text) : it->second.text;
}

// "--nnodes=3" or "PET_NNODES=3": the value as the user gave it.
std::string AsGiven(const RawValues& raw, OptionId id) {
  const RawValue& value = raw.at(id);
  const OptionSpec& spec = SpecFor(id);
  const std::string name =
      value.source == OptionSource::kEnvironment ? EnvNameFor(spec) : std::string(spec.name);
  return name + "=" + value.text;
}

[[noreturn]] void Contradiction(const RawValues& raw, OptionId id, const std::string& engine_says) {
  Refuse(AsGiven(raw, id) + " contradicts " + engine_says + " (drop " +
         std::string(SpecFor(id).name) + ", or use --engine=none to ignore the engine)");
}

void Fill(RawValues& raw, OptionId id, std::string text) {
  if (!Given(raw, id)) raw[id] = {std::move(text), OptionSource::kEngine};
}

EngineChoice Choice(const RawValues& raw) {
  const std::string text = TextOr(raw, OptionId::kEngine);
  auto choice = ParseEngineChoice(text);
  // The command line's choices were checked already; PET_ENGINE's were not.
  if (!choice) Refuse(AsGiven(raw, OptionId::kEngine) + ": expected auto, none, slurm, mpi or k8s");
  return *choice;
}

// --spares=K: 0 when not given (a malformed value is ResolveOptions' to name).
int Spares(const RawValues& raw) {
  if (!Given(raw, OptionId::kSpares)) return 0;
  return ToInt(ParsePythonInt(raw.at(OptionId::kSpares).text)).value_or(0);
}

// --spares=K in place of SettleNnodes: N-K of the engine's N hosts run; the others wait in the
// c10d rendezvous.
void SettleSpares(RawValues& raw, const EngineFacts& facts, int spares) {
  const std::string given = AsGiven(raw, OptionId::kSpares);
  if (spares < 0) Refuse(given + ": the number of spare hosts cannot be negative");
  if (Given(raw, OptionId::kNnodes)) {
    Refuse(given + " and " + AsGiven(raw, OptionId::kNnodes) +
           ": give one of them (--spares=K runs all but K of the engine's hosts)");
  }
  if (facts.nnodes == 0) {
    Refuse(given + " needs the number of hosts, which " + facts.label +
           " does not say: start the extra hosts yourself with --nnodes=MIN:MAX");
  }
  if (facts.nnodes - spares < 2) {
    Refuse(given + " leaves fewer than 2 hosts to run: " + facts.label + " has " +
           std::to_string(facts.nnodes) + " nodes");
  }
  if (TextOr(raw, OptionId::kRdzvBackend) == "static") {
    if (Given(raw, OptionId::kRdzvBackend)) {
      Refuse(given + " needs an elastic rendezvous: use --rdzv-backend=c10d (or etcd-v3), not " +
             AsGiven(raw, OptionId::kRdzvBackend));
    }
    Fill(raw, OptionId::kRdzvBackend, "c10d");
  }
  const std::string running = std::to_string(facts.nnodes - spares);
  Fill(raw, OptionId::kNnodes, running + ":" + running);
}

// The node count: the engine's, or a given one it must fit (N, or MIN:MAX around N).
void SettleNnodes(RawValues& raw, const EngineFacts& facts) {
  if (facts.nnodes == 0) {
    if (!Given(raw, OptionId::kNnodes)) {
      Refuse(facts.label + " does not say how many nodes the job has: add --nnodes=N");
    }
    return;
  }
  if (!Given(raw, OptionId::kNnodes)) {
    Fill(raw, OptionId::kNnodes, std::to_string(facts.nnodes));
    return;
  }
  const std::string& text = raw.at(OptionId::kNnodes).text;
  const size_t colon = text.find(':');
  auto min = ToInt(ParsePythonInt(text.substr(0, colon)));
  auto max = ToInt(ParsePythonInt(colon == std::string::npos ? text : text.substr(colon + 1)));
  if (!min || !max) return;  // malformed: ResolveOptions says so
  if (facts.nnodes < *min || facts.nnodes > *max) {
    Contradiction(raw, OptionId::kNnodes,
                  facts.label + ", which has " + std::to_string(facts.nnodes) + " nodes");
  }
}

void SettleNodeRank(RawValues& raw, const EngineFacts& facts) {
  if (Given(raw, OptionId::kNodeRank)) {
    auto given = ToInt(ParsePythonInt(raw.at(OptionId::kNodeRank).text));
    if (given && *given != facts.node_rank) {
      Contradiction(raw, OptionId::kNodeRank,
                    facts.label + ", where this is node " + std::to_string(facts.node_rank));
    }
    return;
  }
  Fill(raw, OptionId::kNodeRank, std::to_string(facts.node_rank));
}

// Node 0's host: a given --master-addr, else the engine's, else MPI's runtime (the one place
// that handles MPI without an endpoint).
std::string StoreHost(const RawValues& raw, const EngineFacts& facts, const EnvMap& env) {
  if (Given(raw, OptionId::kMasterAddr)) return raw.at(OptionId::kMasterAddr).text;
  if (facts.rdzv_host) return *facts.rdzv_host;
  if (facts.engine != Engine::kMpi) {
    Refuse(facts.label + " does not say where node 0 is: add --master-addr or --rdzv-endpoint");
  }
  std::string error;
  auto host = FindMpiRendezvousHost(env, facts, &error);
  if (!host) Refuse(error);
  return *host;
}

// Adds key=value to --rdzv-conf, unless it already gives the key.
void FillConfKey(RawValues& raw, const std::string& key, const std::string& value) {
  const std::string conf = TextOr(raw, OptionId::kRdzvConf);
  std::string error;
  auto parsed = RdzvConfig::Parse(conf, &error);
  if (!parsed || parsed->Has(key)) return;  // malformed: ResolveOptions says so
  const std::string item = key + "=" + value;
  const OptionSource source =
      Given(raw, OptionId::kRdzvConf) ? raw.at(OptionId::kRdzvConf).source : OptionSource::kEngine;
  raw[OptionId::kRdzvConf] = {conf.empty() ? item : conf + "," + item, source};
}

// c10d elects the store's host by the engine's node rank, unless --rdzv-conf already says.
void FillIsHost(RawValues& raw, const EngineFacts& facts) {
  FillConfKey(raw, "is_host", facts.node_rank == 0 ? "1" : "0");
}

// An elastic job places spares by the engine's segment, unless --rdzv-conf already names one.
void FillSegment(RawValues& raw, const EngineFacts& facts) {
  const std::string backend = TextOr(raw, OptionId::kRdzvBackend);
  if (facts.segment.empty() || backend == "static" || backend.empty()) return;
  FillConfKey(raw, "segment", facts.segment);
}

void SettleStore(RawValues& raw, const EngineFacts& facts, const EnvMap& env) {
  if (Given(raw, OptionId::kRdzvEndpoint)) return;
  const std::string backend = TextOr(raw, OptionId::kRdzvBackend);
  if (backend == "static") {
    Fill(raw, OptionId::kMasterAddr, StoreHost(raw, facts, env));
    if (facts.rdzv_port) Fill(raw, OptionId::kMasterPort, std::to_string(*facts.rdzv_port));
  } else if (backend == "c10d") {
    const int port = Given(raw, OptionId::kMasterPort)
                         ? ToInt(ParsePythonInt(raw.at(OptionId::kMasterPort).text)).value_or(0)
                         : facts.rdzv_port.value_or(kDefaultC10dPort);
    Fill(raw, OptionId::kRdzvEndpoint, Endpoint{StoreHost(raw, facts, env), port}.ToString());
    FillIsHost(raw, facts);
  }
}

// --nnodes as it stands now is one node (N = 1, or MIN:MAX = 1:1).
bool OneNode(const RawValues& raw) {
  const std::string text = TextOr(raw, OptionId::kNnodes);
  const size_t colon = text.find(':');
  return ToInt(ParsePythonInt(colon == std::string::npos ? text : text.substr(colon + 1))) == 1;
}

// "4 nodes, this is node 2, rendezvous on gpu-001:22808".
std::string Summary(const RawValues& raw, const EngineFacts& facts) {
  const std::string nnodes = TextOr(raw, OptionId::kNnodes);
  std::string text = facts.label + ": " + nnodes + (OneNode(raw) ? " node" : " nodes");
  if (const int spares = Spares(raw); spares > 0) {
    text += " running and " + std::to_string(spares) + (spares == 1 ? " spare" : " spares");
  }
  text += ", this is node " + std::to_string(facts.node_rank);
  if (OneNode(raw)) return text;
  std::string where = TextOr(raw, OptionId::kRdzvEndpoint);
  if (where.empty()) {
    where = Endpoint{TextOr(raw, OptionId::kMasterAddr),
                     ToInt(ParsePythonInt(TextOr(raw, OptionId::kMasterPort))).value_or(0)}
                .ToString();
  }
  return text + ", rendezvous on " + where;
}

}  // namespace

Engine ApplyEngine(RawValues& raw, const EnvMap& env, std::vector<std::string>& notes) {
  const bool endpoint_given =
      Given(raw, OptionId::kMasterAddr) || Given(raw, OptionId::kRdzvEndpoint);
  EngineReading reading = DetectEngine(Choice(raw), env, endpoint_given);
  if (!reading.refusal.empty()) Refuse(reading.refusal);
  if (!reading.note.empty()) notes.push_back(reading.note);
  const int spares = Spares(raw);
  if (!reading.facts) {
    if (spares != 0) {
      Refuse(AsGiven(raw, OptionId::kSpares) +
             " needs an engine that says how many hosts the job has (Slurm, MPI or Kubernetes); "
             "without one, start the extra hosts yourself with --nnodes=MIN:MAX");
    }
    return Engine::kNone;
  }
  const EngineFacts& facts = *reading.facts;
  if (spares != 0) {
    SettleSpares(raw, facts, spares);
  } else {
    SettleNnodes(raw, facts);
  }
  SettleNodeRank(raw, facts);
  const bool one_node = OneNode(raw);
  if (Given(raw, OptionId::kStandalone) && raw.at(OptionId::kStandalone).text == "1" && !one_node) {
    Refuse("--standalone runs one node, but " + facts.label + " has " +
           TextOr(raw, OptionId::kNnodes) +
           " nodes (drop --standalone, or use --engine=none to ignore the engine)");
  }
  if (facts.run_id) Fill(raw, OptionId::kRdzvId, *facts.run_id);
  if (!one_node) {
    SettleStore(raw, facts, env);
    FillSegment(raw, facts);
  }
  notes.push_back(Summary(raw, facts));
  return facts.engine;
}

}  // namespace cpplaunch
