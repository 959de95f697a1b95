"""Report section 4 (store throughput): prose (with the measured CPU count), the table, the
correctness check, the figure and the goals on the server's CPU per request (at most 0.6x
LibTorch's at 1, 10 and 100 clients)."""

from ..machine import cpus_text
from ..plots import plot_lines
from ..running import rel, shell_join
from ..servers import SERVER_LABEL
from ..stats import fmt, fmt_stats, scale

HEADER = ["K clients", "server", "kops/s", "p50 µs", "p99 µs", "server CPU µs/request",
          "server CPU in the kernel", "load generator CPU µs/request", "vs LibTorch (kops/s)",
          "vs LibTorch (server CPU/request)", "ok runs"]


def intro(seconds):
    return [
        "`bench/store_load throughput`: K client connections, each a closed loop of PyTorch client calls on its "
        "own keys: `set(k, 32 B)` (SET), `get(k)` (WAIT [k] then GET, exactly as the 1.13 client does it) and "
        "`add(counter, 1)` (ADD on one counter shared by all clients). That is 4 requests in 3 round trips per "
        "iteration, with one outstanding round trip per connection; SET and the WAIT after it travel in one "
        "write, as the 1.13 client's segments do. The requests are encoded once, in the legacy (1.13) dialect, "
        "by the project's own encoder (`rendezvous/store/wire/reply_codec`), and the same binary drives both servers.",
        "All connections live in one epoll thread of the load generator, so 1000 clients cost file descriptors, "
        "not threads; each has its own loopback source address (see benchmark 5). After 0.5 s of warm-up, "
        f"requests answered within a {seconds:g} s window are counted; "
        "latency is per round trip (send to complete reply). Both servers run side by side during the whole "
        "benchmark and are measured alternately, repetition by repetition. The LibTorch server is "
        "`bench/libtorch_store_server`: c10d::TCPStore from libtorch 1.13 with isServer=true, no worker count.",
    ]


def cpu_paragraph(machine):
    return ("Server CPU µs/request is the server process's user+system CPU time (from /proc) during "
            "the whole load run, divided by every request answered in it (warm-up included): what "
            "the server itself spends per request, independent of the load generator, which shares "
            "the same cores. The load generator's own CPU per request (median) is shown beside it: when "
            f"the two add up to about the machine's {cpus_text(machine)}' worth of time, the machine, not "
            "the server alone, is the limit.")


def check_paragraph(checks):
    return ("Before measuring, `store_load check` talks to each server through the project's blocking "
            "`StoreClient` in the legacy dialect (set, get, add, wait, check, answers verified): " +
            "; ".join(f"{SERVER_LABEL[k]}: {'ok' if c.get('ok') else 'FAILED ' + str(c)}"
                      for k, c in checks.items()) + ".")


def row(k, kind, d, base, base_cpu):
    ratio = (d["ops_per_s"]["median"] / base["median"]
             if (kind == "cpplaunch" and base and d["ops_per_s"]) else None)
    cpu_ratio = (d["cpu_us"]["median"] / base_cpu["median"]
                 if (kind == "cpplaunch" and base_cpu and d["cpu_us"]) else None)
    ok = [r for r in d["runs"] if r.get("exit_code") == 0]
    return [str(k), SERVER_LABEL[kind], fmt_stats(d["ops_per_s"], 1 / 1000, 1), fmt_stats(d["p50_us"]),
            fmt_stats(d["p99_us"]), fmt_stats(d["cpu_us"], digits=1),
            f"{d['sys_share']['median'] * 100:.0f}%" if d.get("sys_share") else "n/a",
            fmt(d["driver_cpu_us"]["median"], 1) if d["driver_cpu_us"] else "n/a",
            f"{ratio:.2f}x" if ratio else "–", f"{cpu_ratio:.2f}x" if cpu_ratio else "–",
            f"{len(ok)}/{len(d['runs'])}"]


def rows_for(raw, ks, kinds):
    rows = []
    for k in ks:
        base = raw[f"libtorch/{k}"]["ops_per_s"] if "libtorch" in kinds else None
        base_cpu = raw[f"libtorch/{k}"]["cpu_us"] if "libtorch" in kinds else None
        rows += [row(k, kind, raw[f"{kind}/{k}"], base, base_cpu) for kind in kinds]
    return rows


CPU_GOAL = 0.6  # the server's CPU per request at most this fraction of LibTorch's


def goals(raw, kinds):
    """The server's CPU per request beside LibTorch's at 1, 10 and 100 clients. (Throughput is in
    the table, but with the load generator on the same cores it measures the machine, not the
    server: see the CPU paragraph.)"""
    if not ("cpplaunch" in kinds and "libtorch" in kinds):
        return [(f"Store CPU per request at most {CPU_GOAL}x LibTorch's server",
                 "both servers are needed and one was not available in this run", None)]
    out = []
    for k in (1, 10, 100):
        ours, theirs = raw[f"cpplaunch/{k}"]["cpu_us"], raw[f"libtorch/{k}"]["cpu_us"]
        if ours and theirs:
            ratio = ours["median"] / theirs["median"]
            out.append((f"Store CPU per request at {k} clients at most {CPU_GOAL}x LibTorch's server",
                        f"{ratio:.2f}x ({ours['median']:.1f} vs {theirs['median']:.1f} µs)", ratio <= CPU_GOAL))
    return out


def build(b, data):
    kinds, ks = data["kinds"], data["ks"]
    sec = {"title": "4. Store throughput", "id": "store", "text": intro(data["seconds"])}
    if "cpplaunch" not in kinds:
        sec["text"].append("**cpplaunch's store server (`cpplaunch-store`) was not available in this run**, so "
                           "only the reference server was measured and no ratio can be given.")
    if not kinds:
        return sec, []
    raw = data["raw"]["store"]
    sec["tables"] = [(HEADER, rows_for(raw, ks, kinds))]
    sec["text"] += [cpu_paragraph(b.machine), check_paragraph(data["checks"])]
    sec["commands"] = [shell_join(["scripts/bench --only store"]),
                       shell_join([rel(b.bin["store_load"]), "throughput", "--port", "PORT", "--clients", "K",
                                   "--seconds", str(data["seconds"]), "--warmup-ms", "500"])]
    sec["plots"] = [plot_lines(b, "store", "Store throughput (set/wait/get/add mix)", "concurrent clients (K)",
                               "thousand requests per second",
                               {SERVER_LABEL[kind]: [(k, scale(raw[f"{kind}/{k}"]["ops_per_s"], 1 / 1000))
                                                     for k in ks] for kind in kinds}, logx=True)]
    return sec, goals(raw, kinds)
