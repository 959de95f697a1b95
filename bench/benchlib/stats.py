"""Summaries of repeated measurements (median, min, max), number formatting for the tables,
and the power-law fit used to judge whether a time grows linearly."""

import math
import statistics


def stats(values):
    """{median, min, max, n} over the values that are not None, or None when there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def med(s):
    """The median of a stats() summary, or None."""
    return s["median"] if s else None


def scale(s, f):
    """A stats() summary with every value (not the count) multiplied by f."""
    return None if s is None else {k: (v * f if k != "n" else v) for k, v in s.items()}


def fmt(v, digits=None):
    """A number with thousands separators; by default fewer decimals the larger it is."""
    if v is None:
        return "n/a"
    if digits is None:
        digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2 if abs(v) >= 1 else 3
    return f"{v:,.{digits}f}"


def fmt_stats(s, scale_by=1.0, digits=None):
    """A table cell: median (min – max)."""
    if s is None:
        return "n/a"
    return (f"{fmt(s['median'] * scale_by, digits)} ({fmt(s['min'] * scale_by, digits)} – "
            f"{fmt(s['max'] * scale_by, digits)})")


def ratio_cell(ratio, is_base, spec):
    """The "vs" column: the ratio formatted with spec, "1x" for the baseline, "–" otherwise."""
    if ratio:
        return f"{ratio:{spec}}x"
    return "1x" if is_base else "–"


def ok_cell(runs):
    """The "ok runs" column: runs whose "ok" is true, over all runs."""
    return f"{sum(bool(r['ok']) for r in runs)}/{len(runs)}"


def fit_exponent(points):
    """k in t ~ W^k, fitted by least squares on log-log (W, t) points."""
    xs = [math.log(w) for w, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
