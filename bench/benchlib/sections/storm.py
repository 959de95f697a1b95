"""Report section 5 (init storm): prose (with the measured file-descriptor limit), the table of
sizes and phases, the figure, and the storm goals (1024 and 8192 clients, linear growth)."""

from ..plots import plot_lines
from ..running import rel, shell_join
from ..servers import SERVER_LABEL
from ..stats import fit_exponent, fmt_stats

HEADER = ["W clients", "server", "all released, s", "connect() calls issued, s", "all connected, s",
          "all joined (barrier ADD answered), s", "server CPU s", "ok runs", "failures"]
PHASES = ("Phase columns are the time (from the first `connect()`) when the load generator had "
          "issued every connect call, when the last main connection was established, and when the "
          "last barrier ADD was answered; server CPU is the server process's user+system time "
          "during the storm.")


def fd_paragraph(machine):
    text = ("File descriptors: the storm needs 2·W + a few in the load generator and as many in the server. "
            f"{machine['fd_limit']}.")
    if machine["fd_limit_capped"]:
        text += " The hard limit could not be raised further in this container."
    return text + (" A size whose 2·W connections do not fit the limit (16,384 here) runs without the "
                   "idle callback sockets, one connection per client: its row is marked so.")


def prose(budget_s, machine):
    return [
        "`bench/store_load storm`: W clients start at once against a freshly started server and each does what "
        "a PyTorch 1.13 rank does at `init_process_group`: connect; `ADD init/ 1` and connect its second, idle "
        "\"callback\" socket (both done by the TCPStore constructor); SET its own key; then a barrier: "
        "`ADD /storm/arrived 1`, and the client that brings the count to W does `SET /storm/go`; everyone "
        "`WAIT [/storm/go]`; finally GET the next rank's key. Time runs from the first `connect()` to the last "
        "GET reply, i.e. until every client is released. All 2·W connections are held by one epoll thread; "
        "each connection gets its own loopback source address (127.1.x.y), as ranks on separate hosts would "
        "have, because with a single source address Linux's ephemeral-port search makes 16,384 `connect()` "
        "calls quadratic on the client side (it dominated the first measurements). A size that fails or times "
        "out is not repeated, and a server is not run at the next size once a size took over "
        f"{budget_s / 4:g} s (its time would then exceed the {budget_s:g} s limit if it grows quadratically).",
        "(The real 1.13 barrier polls `ADD key 0` every 10 ms; a WAIT-based barrier is used so that the "
        "number measures the server, not a sleep.)",
        fd_paragraph(machine),
    ]


def failures_cell(runs, budget_s):
    return "; ".join((f"timed out after {budget_s:g} s" if r.get("timed_out") else
                      f"{r.get('failed_connections', '?')} connections failed") +
                     (f"; first failure: {r['first_failure'][:90]}" if r.get("first_failure") else "") +
                     (f"; {r['error'][:90]}" if r.get("error") else "")
                     for r in runs if r.get("exit_code") != 0)


def rows_for(data):
    raw, budget_s, rows = data["raw"]["storm"], data["budget_s"], []
    for w in data["ws"]:
        for kind in data["kinds"]:
            d = raw.get(f"{kind}/{w}")
            if d is None:
                rows.append([str(w), SERVER_LABEL[kind], "not run", "", "", "", "", "",
                             f"skipped: W={data['skipped'][kind]} failed or took over {budget_s / 4:g} s"])
                continue
            ok = sum(r.get("exit_code") == 0 for r in d["runs"])
            label = str(w) if with_callbacks(d) else f"{w} (no callback sockets: fd limit)"
            rows.append([label, SERVER_LABEL[kind], fmt_stats(d["total_s"], digits=3),
                         fmt_stats(d["connect_calls_s"], digits=3), fmt_stats(d["connected_s"], digits=3),
                         fmt_stats(d["joined_s"], digits=3), fmt_stats(d["server_cpu_s"], digits=2),
                         f"{ok}/{len(d['runs'])}", failures_cell(d["runs"], budget_s)])
    return rows


def with_callbacks(d):
    return all(r.get("callback_sockets", True) for r in d["runs"])


def goals(b, data):
    raw, ws = data["raw"]["storm"], data["ws"]
    cp = lambda w: (raw.get(f"cpplaunch/{w}") or {}).get("total_s")  # noqa: E731
    out = []
    if cp(1024):
        out.append(("Init storm: 1024 clients under 0.5 s", f"{cp(1024)['median']:.3f} s",
                    cp(1024)["median"] < 0.5))
    if not b.quick:
        if cp(8192):
            out.append(("Init storm: 8192 clients under 5 s", f"{cp(8192)['median']:.3f} s",
                        cp(8192)["median"] < 5))
        # Sizes run without callback sockets carry half the connections: not the same load.
        pts = [(w, cp(w)["median"]) for w in ws if w >= 1024 and cp(w) and with_callbacks(raw[f"cpplaunch/{w}"])]
        if len(pts) >= 2:
            k = fit_exponent(pts)
            out.append(("Init storm linear in the number of clients",
                        f"time grows as W^{k:.2f} from 1024 to {pts[-1][0]} (linear = 1; met when ≤ 1.2)",
                        k <= 1.2))
    if "cpplaunch" not in data["kinds"]:
        out.append(("Init storm: 1024 under 0.5 s, 8192 under 5 s, linear",
                    "cpplaunch's store server not available", None))
    return out


def libtorch_growth(raw, ws):
    lt = [(w, raw[f"libtorch/{w}"]["total_s"]["median"]) for w in ws
          if raw.get(f"libtorch/{w}") and raw[f"libtorch/{w}"]["total_s"] and w >= 1024]
    if len(lt) >= 2:
        return f"LibTorch's server grows as W^{fit_exponent(lt):.2f} over the same range."
    return None


def build(b, data):
    raw, ws, kinds = data["raw"]["storm"], data["ws"], data["kinds"]
    sec = {"title": "5. Init storm", "id": "storm", "text": prose(data["budget_s"], b.machine)}
    if "cpplaunch" not in kinds:
        sec["text"].append("**cpplaunch's store server (`cpplaunch-store`) was not available in this run.**")
    sec["tables"] = [(HEADER, rows_for(data))]
    sec["text"].append(PHASES)
    sec["commands"] = [shell_join([rel(b.bin["store_load"]), "storm", "--port", "PORT", "--clients", "W"])]
    growth = libtorch_growth(raw, ws)
    if growth:
        sec["text"].append(growth)
    sec["plots"] = [plot_lines(b, "storm", "Init storm: W clients doing PyTorch's init pattern", "clients (W)",
                               "seconds until all released (log scale)",
                               {SERVER_LABEL[kind]: [(w, (raw.get(f"{kind}/{w}") or {}).get("total_s"))
                                                     for w in ws] for kind in kinds}, logx=True, logy=True)]
    return sec, goals(b, data)
