#include "launcher/agent/loopback_listener.h"

#include <algorithm>

#include "launcher/diagnosis/libuv_hint.h"
#include "launcher/multihost/host_info.h"

namespace cpplaunch {

LoopbackListener::LoopbackListener(const EnvMap& env, AgentConsole& console, const LogDir& logs,
                                   std::shared_ptr<HostName> host)
    : env_(env), console_(console), logs_(logs), host_(std::move(host)) {}

void LoopbackListener::OnAttemptStarting(const Round& round) {
  if (facts_ || round.hosts.empty()) return;
  const auto self = std::find_if(round.hosts.begin(), round.hosts.end(), [&](const auto& peer) {
    return peer.group_rank == round.layout.group_rank;
  });
  if (self == round.hosts.end()) return;
  LoopbackFacts facts;
  facts.self_addr = self->node.addr;
  facts.other_hosts = std::any_of(round.hosts.begin(), round.hosts.end(), [&](const auto& peer) {
    return peer.node.addr != facts.self_addr;
  });
  const auto ifname = Lookup(env_, "GLOO_SOCKET_IFNAME");
  facts.ifname_set = ifname && !ifname->empty();
  if (facts.other_hosts) {
    facts.hostname = host_->get();
    facts.name_addrs = HostNameAddresses();
    facts.interface = InterfaceOf(facts.self_addr);
  }
  facts_ = facts;
  if (auto warning = LoopbackWarning(facts)) console_.Say("warning: " + *warning);
}

void LoopbackListener::OnDecision(const AttemptDecided& decided) {
  if (!facts_ || decided.failures == nullptr || !decided.failures->final) return;
  std::vector<std::string> texts;
  for (const WorkerFailure& failure : decided.failures->failures) {
    if (failure.record.killed_by_teardown) continue;
    texts.push_back(FailureText(
        failure, logs_.StderrLog(decided.result.restart_count, failure.record.local_rank)));
  }
  if (auto hint = LoopbackConnectHint(texts, *facts_)) console_.Say(*hint);
}

}  // namespace cpplaunch
