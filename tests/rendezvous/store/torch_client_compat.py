#!/usr/bin/python3
"""PyTorch's own TCPStore client against cpplaunch-store and against PyTorch's server.

Runs one scenario of torch.distributed.TCPStore calls (set, get, add, compare_set, wait with
timeouts, delete_key, num_keys, PrefixStore, a late-wait desync) against both servers and
requires identical results.

With PyTorch >= 2 (torch26_client_compat.py runs it with Debian's 2.6), clients and the
reference server are made with use_libuv=False (Debian's 2.6 has no libuv), and a second
scenario adds what only the modern client offers (multi_get, multi_set, append, check, waits
that time out with CANCEL_WAIT; every connection starts with VALIDATE and PING).

usage: torch_client_compat.py PATH/TO/cpplaunch-store
       torch_client_compat.py --results PORT|reference   (one side's results as JSON lines)
Exit status: 0 same results, 1 a difference or a failure, 77 torch is not importable (skip).
"""
import datetime
import json
import subprocess
import sys
import threading
import time

try:
    import torch
    import torch.distributed as dist
except ImportError as error:  # pragma: no cover
    print(f"SKIP: torch is not importable: {error}")
    sys.exit(77)

HOST = "127.0.0.1"
TIMEOUT = datetime.timedelta(seconds=10)
SHORT = datetime.timedelta(milliseconds=300)


# Debian's 2.6 is built without libuv, yet TCPStore defaults to use_libuv=True (1.13: no such
# argument).
MODERN = int(torch.__version__.split(".")[0]) >= 2
STORE_ARGS = {"use_libuv": False} if MODERN else {}


def client(port, timeout=TIMEOUT):
    store = dist.TCPStore(HOST, port, is_master=False, timeout=TIMEOUT, **STORE_ARGS)
    store.set_timeout(timeout)  # 1.13 cannot connect with a sub-second timeout
    return store


def attempt(fn):
    """The result of fn(), or the exception's type name (messages are client-side anyway)."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - the type is the result
        return f"raised {type(error).__name__}"


def scenario(port):
    """Every observable result, in order, as (label, value)."""
    results = []

    def record(label, fn):
        results.append((label, attempt(fn)))

    s = client(port)
    record("set", lambda: s.set("k", "v"))
    record("get", lambda: s.get("k"))
    record("set binary", lambda: s.set("bin", b"a\x00b\xff"))
    record("get binary", lambda: s.get("bin"))
    record("set empty key", lambda: s.set("", "empty-key"))
    record("get empty key", lambda: s.get(""))
    record("add +5", lambda: s.add("n", 5))
    record("add -2", lambda: s.add("n", -2))
    record("get counter", lambda: s.get("n"))
    record("add 0", lambda: s.add("n", 0))
    record("add max", lambda: s.add("big", 2**63 - 1))
    record("add overflow", lambda: s.add("big", 1))
    record("get wrapped", lambda: s.get("big"))
    record("set padded number", lambda: s.set("padded", "  12abc"))
    record("add to padded", lambda: s.add("padded", 1))
    record("cas create", lambda: s.compare_set("c", "", "A"))
    record("cas swap", lambda: s.compare_set("c", "A", "B"))
    record("cas mismatch", lambda: s.compare_set("c", "Z", "C"))
    record("cas missing", lambda: s.compare_set("missing", "Z", "C"))
    record("check missing stays missing", lambda: s.num_keys())
    record("get after cas", lambda: s.get("c"))
    big = bytes(range(256)) * 4096  # 1 MiB
    record("set 1MiB", lambda: s.set("large", big))
    record("get 1MiB", lambda: s.get("large") == big)
    record("wait present", lambda: s.wait(["k", "n"]))
    record("wait present with timeout", lambda: s.wait(["k"], SHORT))
    record("num_keys", lambda: s.num_keys())
    record("delete", lambda: s.delete_key("k"))
    record("delete again", lambda: s.delete_key("k"))
    record("num_keys after delete", lambda: s.num_keys())

    other = client(port)
    record("other sees keys", lambda: other.get("c"))

    def set_later():
        time.sleep(0.1)
        other.set("later", "arrived")

    setter = threading.Thread(target=set_later)
    setter.start()
    record("wait woken by another client", lambda: s.wait(["later"], TIMEOUT))
    setter.join()
    record("get woken key", lambda: s.get("later"))

    short = client(port, SHORT)
    record("get missing times out", lambda: short.get("never"))
    record("wait missing times out", lambda: client(port).wait(["never"], SHORT))

    # The 1.13 client's stale wait: the server still answers it after the client gave up, and
    # that stray STOP_WAITING byte shifts the next reply (42 reads as 42 * 256 = 10752).
    stale = client(port)
    record("stale wait times out", lambda: stale.wait(["late"], SHORT))
    other.set("late", "x")
    time.sleep(0.1)
    record("add after stale wait", lambda: stale.add("after", 42))

    prefixed = dist.PrefixStore("/worker/attempt_0", client(port))
    pg = dist.PrefixStore("default_pg", prefixed)
    record("prefix set", lambda: pg.set("0", "addr"))
    record("prefix raw get", lambda: other.get("/worker/attempt_0/default_pg/0"))
    record("prefix add", lambda: pg.add("store_based_barrier_key:1", 1))
    record("num_keys end", lambda: s.num_keys())
    if MODERN:
        results += modern_scenario(port)
    return results


def modern_scenario(port):
    """What only the modern (>= 2.1) client sends, as (label, value)."""
    results = []

    def record(label, fn):
        results.append((label, attempt(fn)))

    s, other = client(port), client(port)
    offered = [name for name in ("multi_get", "multi_set", "append", "check", "queue_push",
                                 "queue_pop", "queue_len", "list_keys") if hasattr(s, name)]
    record("client offers", lambda: offered)
    record("extended api", lambda: s.has_extended_api())
    record("multi_set", lambda: s.multi_set(["m/a", "m/b", "m/c"], ["1", b"\x00two", ""]))
    record("multi_get", lambda: s.multi_get(["m/c", "m/a", "m/b"]))
    record("multi_get one", lambda: s.multi_get(["m/a"]))
    record("multi_set overwrite", lambda: s.multi_set(["m/a"], ["one"]))
    record("multi_get by other", lambda: other.multi_get(["m/a", "m/b"]))
    record("multi_set empty", lambda: s.multi_set([], []))
    record("multi_get empty", lambda: s.multi_get([]))
    record("append new", lambda: s.append("ap", "x"))
    record("append more", lambda: s.append("ap", b"y\x00z"))
    record("get appended", lambda: s.get("ap"))
    record("append to counter", lambda: (s.add("apn", 7), s.append("apn", "0"), s.add("apn", 1)))
    record("check present", lambda: s.check(["m/a", "ap"]))
    record("check one missing", lambda: s.check(["m/a", "none"]))
    record("check none", lambda: s.check([]))
    record("num_keys", lambda: s.num_keys())

    # A timed-out wait ends with CANCEL_WAIT, so the connection stays usable (1.13 desyncs).
    short = client(port, SHORT)
    record("wait times out", lambda: short.wait(["w/late"], SHORT))
    record("same connection after cancel", lambda: short.add("w/n", 5))
    other.set("w/late", "now")
    time.sleep(0.1)
    record("no stray wake-up", lambda: short.add("w/n", 1))
    record("wait present now", lambda: short.wait(["w/late"], SHORT))

    def set_later():
        time.sleep(0.1)
        other.multi_set(["w/x", "w/y"], ["1", "2"])

    setter = threading.Thread(target=set_later)
    setter.start()
    record("multi_get waits for keys", lambda: s.multi_get(["w/x", "w/y"]))
    setter.join()
    record("multi_get missing times out", lambda: short.multi_get(["w/never"]))
    record("connection after multi_get timeout", lambda: short.get("w/late"))
    big = bytes(range(256)) * 4096
    record("multi_set 2 MiB", lambda: s.multi_set(["big1", "big2"], [big, big[::-1]]))
    record("multi_get 2 MiB", lambda: [v == w for v, w in zip(other.multi_get(["big1", "big2"]),
                                                              (big, big[::-1]))])
    record("delete after multi_set", lambda: s.delete_key("m/a"))
    record("num_keys end", lambda: s.num_keys())
    return results


def run_against_cpplaunch(store_binary):
    server = subprocess.Popen([store_binary, "--host", HOST, "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        return scenario(port)
    finally:
        server.terminate()
        server.wait(timeout=10)


def run_against_pytorch():
    master = dist.TCPStore(HOST, 0, is_master=True, wait_for_workers=False, timeout=TIMEOUT,
                           **STORE_ARGS)
    return scenario(master.port)


def print_results(side):
    """One JSON line [label, repr(value)] per result: the other side of the comparison runs in
    another Python (torch26_client_compat.py)."""
    results = run_against_pytorch() if side == "reference" else scenario(int(side))
    for label, value in results:
        print(json.dumps([label, repr(value)]), flush=True)
    return 0


def compare(ours, reference):
    differences = 0
    for (label, mine), (_, theirs) in zip(ours, reference):
        same = mine == theirs
        differences += 0 if same else 1
        print(f"{'ok  ' if same else 'DIFF'} {label}: cpplaunch={mine!r} pytorch={theirs!r}")
    if len(ours) != len(reference):
        print("DIFF: different number of results")
        return 1
    print(f"{len(ours)} results, {differences} differences")
    return 1 if differences else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--results":
        return print_results(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    return compare(run_against_cpplaunch(sys.argv[1]), run_against_pytorch())


if __name__ == "__main__":
    sys.exit(main())
