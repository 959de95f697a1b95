"""The report's figures: gnuplot PNGs next to the report (in a folder named after it), line
charts and bar charts of medians with min-max error bars."""

import subprocess
from pathlib import Path

from .running import log

TERMINAL = "set terminal pngcairo noenhanced size 900,520 font 'DejaVu Sans,10'"


def plot_dir(out):
    """The folder of figures and results.json for the report at path out."""
    d = Path(out).parent / Path(out).stem
    d.mkdir(parents=True, exist_ok=True)
    return d


def short(label):
    """Plot legends: the long launcher names shortened."""
    return (label.replace("torchrun (1.13 default --monitor_interval=5)", "torchrun, monitor 5 s")
            .replace("torchrun (newest default --monitor_interval=0.1)", "torchrun, monitor 0.1 s")
            .replace("examples trainer (LibTorch)", "trainer")
            .replace("examples/ddp_train.py", "ddp_train.py")
            .replace(" (no launcher)", "").replace('"', "'"))


def gnuplot(script):
    r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
    if r.returncode != 0:
        log(f"gnuplot failed: {r.stderr[-500:]}")


def plot_lines(b, name, title, xlabel, ylabel, series, logx=False, logy=False):
    """series: {label: [(x, stats or None)]}; draws medians with min-max error bars. Returns the
    PNG's path, or None when there is nothing to draw."""
    out = plot_dir(b.args.out) / f"{name}.png"
    plots = []
    for i, (label, pts) in enumerate(series.items()):
        f = b.scratch / f"{name}-{i}.dat"
        lines = [f"{x} {s['median']} {s['min']} {s['max']}" for x, s in pts if s]
        if not lines:
            continue
        f.write_text("\n".join(lines) + "\n")
        plots.append(f"'{f}' using 1:2:3:4 with yerrorlines lw 2 pt 7 title \"{short(label)}\"")
    if not plots:
        return None
    gnuplot(f"""{TERMINAL}
set output '{out}'
set title "{title}"
set xlabel "{xlabel}"
set ylabel "{ylabel}"
set key outside bottom center horizontal
set grid
{'set logscale x 2' if logx else ''}
{'set logscale y' if logy else ''}
plot {', '.join(plots)}
""")
    return out


def plot_bars(b, name, title, ylabel, bars, logy=False):
    """bars: [(label, stats or None)]; one bar per median with min-max error bars."""
    out = plot_dir(b.args.out) / f"{name}.png"
    f = b.scratch / f"{name}.dat"
    lines = [f'"{short(label)}" {s["median"]} {s["min"]} {s["max"]}' for label, s in bars if s]
    if not lines:
        return None
    f.write_text("\n".join(lines) + "\n")
    gnuplot(f"""{TERMINAL}
set output '{out}'
set title "{title}"
set ylabel "{ylabel}"
set style fill solid 0.6
set boxwidth 0.6
set grid ytics
{'set logscale y' if logy else 'set yrange [0:*]'}
set bmargin 7
set xtics rotate by -25
unset key
plot '{f}' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0
""")
    return out
