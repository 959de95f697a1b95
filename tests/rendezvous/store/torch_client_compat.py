#!/usr/bin/python3
"""PyTorch's own TCPStore client against cpplaunch-store and against PyTorch's server.

Runs one scenario of torch.distributed.TCPStore calls (set, get, add, compare_set, wait with
timeouts, delete_key, num_keys, PrefixStore, a late-wait desync) against both servers and
requires identical results.

usage: torch_client_compat.py PATH/TO/cpplaunch-store
Exit status: 0 same results, 1 a difference or a failure, 77 torch is not importable (skip).
"""
import datetime
import subprocess
import sys
import threading
import time

try:
    import torch.distributed as dist
except ImportError as error:  # pragma: no cover
    print(f"SKIP: torch is not importable: {error}")
    sys.exit(77)

HOST = "127.0.0.1"
TIMEOUT = datetime.timedelta(seconds=10)
SHORT = datetime.timedelta(milliseconds=300)


def client(port, timeout=TIMEOUT):
    store = dist.TCPStore(HOST, port, is_master=False, timeout=TIMEOUT)
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
    master = dist.TCPStore(HOST, 0, is_master=True, wait_for_workers=False, timeout=TIMEOUT)
    return scenario(master.port)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    ours = run_against_cpplaunch(sys.argv[1])
    reference = run_against_pytorch()
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


if __name__ == "__main__":
    sys.exit(main())
