"""Hot spares (issue 24) on loopback, with real agents of a c10d job:

  spare_takes_slot   3 member agents and 1 spare (--nnodes=3:3, the spare started when the job
                     is full); one member that does not host the store is SIGKILLed with its
                     workers. The spare takes its group rank, the survivors keep their GROUP_RANK
                     and RANKs and say which host took which slot, the job counts one restart
                     and ends 0. Measures the time from
                     the SIGKILL to every worker of the next attempt running.
  spare_takes_slot_4 the same with 4 members (--nnodes=4:4), where no host's heartbeat peers
                     alone cover every member: every survivor still names who took the slot.
  spare_takes_slot_elastic
                     the same with --nnodes=2:3: the survivors alone reach MIN and arm the last
                     call (30 s); the spare fills the last seat and the round completes at once.

  spare_dies_waiting 3 members (--nnodes=2:3) and 1 spare; the spare is SIGKILLed while it waits,
                     then a member: nothing names the dead spare, the round shrinks to the 2
                     survivors at the last call, and the job ends 0.
  two_lost_one_spare 3 members (--nnodes=2:3) and 1 spare; two members are SIGKILLed at once: the
                     spare fills one slot, the round has 2 hosts (MIN) after the last call, the
                     store's host keeps its ranks, and the job ends 0.

  quarantine         3 members (--nnodes=3:3, quarantine_after=2) and 1 spare; one member's
                     workers fail first in two attempts: it is set aside (one line, exit 1), the
                     spare takes its slot, the survivors keep their ranks, and the job ends 0.

  segment_match      3 members in two racks (--rdzv-conf segment=NAME) and 2 spares, one per
                     rack, the other rack's first; a member is SIGKILLed: the spare of its rack
                     takes its slot, the other spare waits, and exits 0 when the job ends.

  spare_not_needed   2 members (--nnodes=2:2) finish their work while a spare waits: the spare
                     exits 0 with one line (a scheduler's step must not fail for it).

The workers are shell scripts (--no-python) that write their environment to a file, so that the
measured time is the launcher's, not PyTorch's import.

usage: spares_test.py CPPLAUNCH [scenario ...]
Exit status: 0 all passed, 1 a failure.
"""
import json
import os
import signal
import sys
import time

from agent_faults_test import LOCAL, TimedAgent, close, output, run_scenarios
from multihost_test import Failure, Job, check, free_port

# Writes "RANK GROUP_RANK WORLD_SIZE" to w-<host>-<restart>-<local rank>, then sleeps: long in
# the attempts before MH_LONG_UNTIL (1 by default: to be killed), briefly after (so that the job
# ends 0). The workers of host MH_FAILING instead exit 3 once the file fail-now exists.
WORKER = ('printf "%s %s %s\\n" "$RANK" "$GROUP_RANK" "$WORLD_SIZE" '
          '> "$MH_STAMP_DIR/w.tmp.$MH_HOST.$LOCAL_RANK"; '
          'mv "$MH_STAMP_DIR/w.tmp.$MH_HOST.$LOCAL_RANK" '
          '"$MH_STAMP_DIR/w-$MH_HOST-$TORCHELASTIC_RESTART_COUNT-$LOCAL_RANK"; '
          'if [ "$MH_HOST" = "${MH_FAILING:-none}" ]; then '
          'while [ ! -e "$MH_STAMP_DIR/fail-now" ]; do sleep 0.05; done; exit 3; fi; '
          'if [ "$TORCHELASTIC_RESTART_COUNT" -lt "${MH_LONG_UNTIL:-1}" ]; then sleep 120; '
          'else sleep 2; fi')

NPROC = 2


def start(job, name, args):
    argv = [job.cpplaunch] + args + ["--no-python", "/bin/sh", "-c", WORKER]
    agent = TimedAgent(name, argv, job.env({"MH_HOST": name}))
    job.agents.append(agent)
    return agent


def stamps(job, host, restart):
    """{local rank: (RANK, GROUP_RANK, WORLD_SIZE)} of `host`'s workers in attempt `restart`."""
    found = {}
    for local in range(NPROC):
        path = os.path.join(job.stamp_dir, f"w-{host}-{restart}-{local}")
        if os.path.exists(path):
            with open(path) as f:
                found[local] = tuple(int(v) for v in f.read().split())
    return found


def wait_workers(job, hosts, restart, timeout):
    """Waits until every worker of `hosts` ran in attempt `restart`; returns when (time.time())."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(len(stamps(job, h, restart)) == NPROC for h in hosts):
            return time.time()
        time.sleep(0.005)
    raise Failure(f"workers of {hosts} did not run in attempt {restart}\n{output(job)}")


def full_job_with_spare(job, nnodes, extra_conf="", max_restarts=1, extra_args=(), count=3):
    """Starts `count` members m0, m1, ... (m0 serves the store) running attempt 0 and a spare
    that waits, in `job` (the caller closes it); returns (agents by name, {member: its attempt-0
    stamps})."""
    args = [f"--nnodes={nnodes}", "--rdzv-backend=c10d", "--rdzv-id=spares",
            f"--max-restarts={max_restarts}",
            f"--rdzv-endpoint={LOCAL}:{free_port()}", f"--nproc-per-node={NPROC}",
            "--rdzv-conf=join_timeout=60" + extra_conf, *extra_args]
    first = start(job, "m0", args)
    check(first.wait_line("serves the job's store", 30) is not None,
          f"m0 does not serve the store\n{output(job)}")
    members = [f"m{i}" for i in range(count)]
    for name in members[1:]:
        start(job, name, args)
    wait_workers(job, members, 0, 60)
    before = {h: stamps(job, h, 0) for h in members}
    spare = start(job, "spare", args)
    check(spare.wait_line("this host waits for a free place", 20) is not None,
          f"the spare never said it waits for a free place\n{output(job)}")
    return {a.name: a for a in job.agents}, before


def spare_takes_slot(cpplaunch, report, nnodes, count=3):
    job = Job(cpplaunch, {})
    try:
        agents, before = full_job_with_spare(job, nnodes, count=count,
                                             extra_args=["--event-log-handler=console"])
        members, spare = [f"m{i}" for i in range(count)], agents["spare"]
        # The victim: the member that does not serve the store and has group rank 1 if it can,
        # so that a fresh sort would move the other survivors.
        victim_name = next((h for h in members[1:] if before[h][0][1] == 1), members[-1])
        victim = agents[victim_name]
        lost_group_rank = before[victim_name][0][1]
        killed_at = time.time()
        victim.kill()  # the agent's process group: the agent and its workers
        check(victim.wait(10) == -signal.SIGKILL, f"{victim_name} did not die")
        survivors = [h for h in members if h != victim_name]
        running_at = wait_workers(job, survivors + ["spare"], 1, 60)
        codes = {a.name: a.wait(60) for a in job.agents if a is not victim}
        out = output(job)
        check(all(c == 0 for c in codes.values()), f"exit codes {codes}\n{out}")
        for host in survivors:
            check(stamps(job, host, 1) == before[host],
                  f"{host}'s ranks moved: {before[host]} -> {stamps(job, host, 1)}\n{out}")
        taken = stamps(job, "spare", 1)
        check(taken == before[victim_name],
              f"the spare got {taken}, not the lost host's {before[victim_name]}\n{out}")
        check(f"complete: node rank {lost_group_rank} of {count}" in spare.output,
              f"the spare does not say which slot it took\n{out}")
        # Every survivor names the spare and the lost host whose slot it took.
        for name in survivors:
            check(f"took group rank {lost_group_rank}, the slot of " in agents[name].output,
                  f"{name} does not say who took the lost slot\n{out}")
            # ... and records it as a torchelastic-shaped event, naming the same hosts.
            events = [json.loads(line) for line in agents[name].output.splitlines()
                      if line.startswith('{"name": "cpplaunch.slot.taken"')]
            check(len(events) == 1, f"{name} recorded {len(events)} slot events\n{out}")
            slot = json.loads(events[0]["metadata"]["metadata"])
            check(slot["group_rank"] == lost_group_rank and
                  slot["replaced_node_id"] not in (None, slot["node_id"]),
                  f"{name}'s slot event says {slot}\n{out}")
        delay = running_at - killed_at
        report(f"--nnodes={nnodes}: member with group rank {lost_group_rank} SIGKILLed; the spare took its slot, "
               f"survivors' ranks unchanged; every worker of attempt 1 running "
               f"{delay * 1000:.0f} ms after the kill")
        check(delay < 1.0, f"attempt 1 ran {delay:.2f} s after the kill (goal 1 s)\n{out}")
    finally:
        close(job)


def scenario_spare_takes_slot(cpplaunch, report):
    spare_takes_slot(cpplaunch, report, "3:3")


def scenario_spare_takes_slot_4(cpplaunch, report):
    # At 4 hosts, rank 2's heartbeat peers alone (3, 0) leave out rank 1: each survivor must still
    # know every member to name who took the lost slot (round_assignment.h: kEveryoneKnownUpTo).
    spare_takes_slot(cpplaunch, report, "4:4", count=4)


def scenario_spare_takes_slot_elastic(cpplaunch, report):
    # MIN reached by the survivors arms the 30 s last call; the spare filling the last seat
    # completes the round at once.
    spare_takes_slot(cpplaunch, report, "2:3")


def ranks_of(found):
    """{local rank: (RANK, GROUP_RANK)}: what a shrunken round must keep (WORLD_SIZE changes)."""
    return {local: values[:2] for local, values in found.items()}


def scenario_spare_dies_waiting(cpplaunch, report):
    job = Job(cpplaunch, {})
    try:
        agents, before = full_job_with_spare(job, "2:3", ",last_call_timeout=1")
        agents["spare"].kill()
        check(agents["spare"].wait(10) == -signal.SIGKILL, "the spare did not die")
        agents["m2"].kill()
        check(agents["m2"].wait(10) == -signal.SIGKILL, "m2 did not die")
        wait_workers(job, ["m0", "m1"], 1, 60)
        codes = {name: agents[name].wait(60) for name in ("m0", "m1")}
        out = output(job)
        check(codes == {"m0": 0, "m1": 0}, f"exit codes {codes}\n{out}")
        for name in ("m0", "m1"):
            world = {rank[2] for rank in stamps(job, name, 1).values()}
            check(world == {2 * NPROC}, f"{name}'s attempt 1 world size {world}\n{out}")
            check("spare" not in agents[name].output.replace("spares", ""),
                  f"{name} names the dead spare\n{agents[name].output}")
        check(ranks_of(stamps(job, "m0", 1)) == ranks_of(before["m0"]), f"m0's ranks moved\n{out}")
        report("a spare SIGKILLed while it waited left no trace; the round shrank to 2 at the "
               "last call and the job ended 0")
    finally:
        close(job)


def scenario_two_lost_one_spare(cpplaunch, report):
    job = Job(cpplaunch, {})
    try:
        agents, before = full_job_with_spare(job, "2:3", ",last_call_timeout=2")
        killed_at = time.time()
        # Both stopped first, then killed: lost at once. Killed one after the other, the second
        # could handle the first's loss between the two kills (this process may lose its CPU
        # in between), join the replacement round and only then die.
        for name in ("m1", "m2"):
            os.killpg(agents[name].proc.pid, signal.SIGSTOP)
        for name in ("m1", "m2"):
            agents[name].kill()
        for name in ("m1", "m2"):
            check(agents[name].wait(10) == -signal.SIGKILL, f"{name} did not die")
        running_at = wait_workers(job, ["m0", "spare"], 1, 60)
        codes = {name: agents[name].wait(60) for name in ("m0", "spare")}
        out = output(job)
        check(codes == {"m0": 0, "spare": 0}, f"exit codes {codes}\n{out}")
        check(ranks_of(stamps(job, "m0", 1)) == ranks_of(before["m0"]), f"m0's ranks moved\n{out}")
        spare_ranks = stamps(job, "spare", 1)
        check({rank[1] for rank in spare_ranks.values()} == {1} and
              {rank[2] for rank in spare_ranks.values()} == {2 * NPROC},
              f"the spare got {spare_ranks}, not group rank 1 of a world of {2 * NPROC}\n{out}")
        check("took group rank 1" in agents["m0"].output,
              f"m0 does not say which host took group rank 1\n{out}")
        report(f"two members SIGKILLed at once with one spare: the spare took group rank 1 and "
               f"the round of 2 (MIN) ran {running_at - killed_at:.1f} s after the kills "
               f"(last_call_timeout=2)")
    finally:
        close(job)


def scenario_quarantine(cpplaunch, report):
    # m2's workers fail first in attempts 0 and 1: with quarantine_after=2 and a spare waiting,
    # m2 is set aside before attempt 2, whose round the spare completes in m2's slot.
    job = Job(cpplaunch, {"MH_FAILING": "m2", "MH_LONG_UNTIL": "2"})
    try:
        agents, before = full_job_with_spare(job, "3:3", ",quarantine_after=2", max_restarts=2)
        open(os.path.join(job.stamp_dir, "fail-now"), "w").close()
        survivors = ["m0", "m1"]
        wait_workers(job, survivors + ["spare"], 2, 60)
        codes = {a.name: a.wait(60) for a in job.agents}
        out = output(job)
        check(codes == {"m0": 0, "m1": 0, "m2": 1, "spare": 0}, f"exit codes {codes}\n{out}")
        # A worker of m2 fails at once in attempt 1: its sibling may be stopped before it stamps.
        check(stamps(job, "m2", 1) and not stamps(job, "m2", 2),
              f"m2 did not fail twice, then stop\n{out}")
        for host in survivors:
            check(stamps(job, host, 2) == before[host],
                  f"{host}'s ranks moved: {before[host]} -> {stamps(job, host, 2)}\n{out}")
        check(stamps(job, "spare", 2) == before["m2"],
              f"the spare got {stamps(job, 'spare', 2)}, not m2's {before['m2']}\n{out}")
        line = ("is set aside for the rest of the job: its workers failed first in 2 attempt(s), "
                "and a spare took its place")
        check(line in agents["m2"].output, f"m2 does not say why it stops\n{out}")
        check(all("which is set aside for the rest of the job" in agents[h].output and
                  "hosts set aside during the job (a spare took each one's place): "
                  in agents[h].output for h in survivors),
              f"the survivors do not say who took m2's slot, nor name it at the end\n{out}")
        report("m2's workers failed first twice (quarantine_after=2): m2 was set aside with one "
               "line and exit 1, the spare took its slot, the survivors' ranks stayed, the job "
               "ended 0 after 2 restarts")
    finally:
        close(job)


def segment_match(cpplaunch, report, backend_args, conf="join_timeout=60"):
    """Members m0, m2 in rack-a and m1 in rack-b; spare sa (rack-a) waits first, then sb
    (rack-b). m1 is lost: sb takes its slot, not sa. `backend_args`: the rendezvous options (for
    c10d, m0 serves the store); `conf`: the --rdzv-conf keys besides segment."""
    job = Job(cpplaunch, {})
    try:
        args = ["--nnodes=3:3", "--max-restarts=1", f"--nproc-per-node={NPROC}", *backend_args]
        rack = {"m0": "rack-a", "m1": "rack-b", "m2": "rack-a", "sa": "rack-a", "sb": "rack-b"}
        agents = {}
        for name in ("m0", "m1", "m2", "sa", "sb"):
            agents[name] = start(job, name, args + [f"--rdzv-conf={conf},segment={rack[name]}"])
            if name == "m0" and "--rdzv-backend=c10d" in backend_args:
                check(agents[name].wait_line("serves the job's store", 30) is not None,
                      f"m0 does not serve the store\n{output(job)}")
            if name == "m2":
                wait_workers(job, ["m0", "m1", "m2"], 0, 60)
            if name in ("sa", "sb"):
                check(agents[name].wait_line("this host waits for a free place", 20) is not None,
                      f"{name} never said it waits for a free place\n{output(job)}")
        before = stamps(job, "m1", 0)
        agents["m1"].kill()
        check(agents["m1"].wait(10) == -signal.SIGKILL, "m1 did not die")
        wait_workers(job, ["m0", "m2", "sb"], 1, 60)
        out = output(job)
        check(stamps(job, "sb", 1) == before,
              f"sb got {stamps(job, 'sb', 1)}, not m1's {before}\n{out}")
        check(not stamps(job, "sa", 1), f"sa, of another rack, ran\n{out}")
        codes = {n: agents[n].wait(60) for n in ("m0", "m2", "sb", "sa")}
        check(codes == {"m0": 0, "m2": 0, "sb": 0, "sa": 0}, f"exit codes {codes}\n{output(job)}")
        report("m1 of rack-b lost: sb (rack-b) took its slot though sa (rack-a) waited first")
    finally:
        close(job)


def scenario_segment_match(cpplaunch, report):
    segment_match(cpplaunch, report, ["--rdzv-backend=c10d", "--rdzv-id=segments",
                                      f"--rdzv-endpoint={LOCAL}:{free_port()}"])


def scenario_spare_not_needed(cpplaunch, report):
    port = free_port()
    job = Job(cpplaunch, {})
    args = ["--nnodes=2:2", "--rdzv-backend=c10d", "--rdzv-id=unneeded",
            f"--rdzv-endpoint={LOCAL}:{port}", "--nproc-per-node=1", "--no-python", "/bin/sh",
            "-c", 'if [ "$MH_HOST" = spare ]; then exit 5; fi; sleep 5']
    try:
        members = []
        for name in ("m0", "m1"):
            agent = TimedAgent(name, [cpplaunch] + args, job.env({"MH_HOST": name}))
            job.agents.append(agent)
            members.append(agent)
            if name == "m0":
                check(agent.wait_line("serves the job's store", 30) is not None,
                      f"m0 does not serve the store\n{output(job)}")
        check(all(m.wait_line("complete: node rank", 30) is not None for m in members),
              f"the members' round did not complete\n{output(job)}")
        # The members' workers run 5 s: the spare joins the full job and waits (the line it
        # ends with says it waited).
        spare = TimedAgent("spare", [cpplaunch] + args, job.env({"MH_HOST": "spare"}))
        job.agents.append(spare)
        codes = {a.name: a.wait(60) for a in job.agents}
        out = output(job)
        check(codes == {"m0": 0, "m1": 0, "spare": 0}, f"exit codes {codes}\n{out}")
        check("job 'unneeded' finished without needing " in spare.output and
              "which waited as a spare; exiting" in spare.output,
              f"the spare does not say why it exits\n{out}")
        report("a spare the job finished without exited 0, saying so")
    finally:
        close(job)


SCENARIOS = {
    "spare_takes_slot": scenario_spare_takes_slot,
    "spare_takes_slot_4": scenario_spare_takes_slot_4,
    "spare_takes_slot_elastic": scenario_spare_takes_slot_elastic,
    "spare_dies_waiting": scenario_spare_dies_waiting,
    "two_lost_one_spare": scenario_two_lost_one_spare,
    "spare_not_needed": scenario_spare_not_needed,
    "quarantine": scenario_quarantine,
    "segment_match": scenario_segment_match,
}


def main(argv):
    return run_scenarios(argv, SCENARIOS, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
