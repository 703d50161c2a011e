"""Reading and showing measurements, for the pages that report them (not a page itself).

The Performance, C++ vs Python and compiling pages import it: sphinx-gallery runs a
page with its own folder (here gallery/deep_dives/) on ``sys.path``, and conf.py's
``ignore_pattern`` keeps files whose name starts with ``_`` from becoming pages.
"""

import html
import json
from pathlib import Path

from matplotlib.patches import Patch

import backend_pkg

# ``make bench`` writes it in the checkout this backend_pkg is installed from.
BENCHMARKS = Path(backend_pkg.__file__).resolve().parents[1] / "source" / "benchmarks.json"

LABELS = {
    "npy": "npy",
    "floor": "no-op floor",
    "floor_with_result": "floor + new result",
    "numpy": "NumPy",
    "cpu": "CPU eager",
    "npy_eager": "npy eager",
    "npy_compiled": 'npy compiled, backend="npy"',
    "npy_inductor": "npy compiled, Inductor",
    "cpu_eager": "CPU eager",
    "cpu_inductor": "CPU compiled, Inductor",
    "cpu_dynamo_only": "CPU, Dynamo only",
    "npy_inductor_guard_in_cpp": "npy compiled, Inductor, guard in C++",
    "cpu_inductor_guard_in_cpp": "CPU compiled, Inductor (guard-in-C++ process)",
    "cpp_twin": "C++ twin",
    "minimal_python": "minimal Python",
    "backend_pkg": "backend_pkg",
}
COLORS = dict(
    zip(LABELS, ["C0", "C1", "C5", "C2", "C3", "C0", "C4", "C8", "C3", "C9", "C6", "C8", "C9", "C7", "C8", "C0"])
)


def load_benchmarks():
    """What ``make bench`` last wrote."""
    return json.loads(BENCHMARKS.read_text())


def us(row):
    return "unavailable" if row["us"] is None else f"{row['us']:,.1f} µs"


def print_rows(timings, group):
    """One line per case of ``group``: each implementation's time."""
    for case, rows in timings[group].items():
        print(f"{case:11}" + " | ".join(f"{LABELS[name]} {us(row)}" for name, row in rows.items()))


def grouped_bars(axes, timings, group, ylabel):
    """One cluster of bars per case of ``group``, one bar per implementation; n/a where unmeasured."""
    cases = timings[group]
    names = list(next(iter(cases.values())))
    width = 0.8 / len(names)
    for index, name in enumerate(names):
        offset = (index - (len(names) - 1) / 2) * width
        values = {position: rows[name]["us"] for position, rows in enumerate(cases.values())}
        measured = {position: value for position, value in values.items() if value is not None}
        bars = axes.bar(
            [position + offset for position in measured], list(measured.values()), width, color=COLORS[name]
        )
        axes.bar_label(bars, [f"{value:,.1f}" for value in measured.values()], fontsize=7)
        for position in values.keys() - measured.keys():
            axes.annotate(
                "n/a",
                (position + offset, 0.02),
                xycoords=("data", "axes fraction"),
                ha="center",
                fontsize=7,
                color=COLORS[name],
            )
    axes.set_xticks(range(len(cases)), list(cases))
    axes.set_ylabel(ylabel)
    # Handles of their own: an implementation with no bar at all still gets its colour.
    axes.legend(handles=[Patch(color=COLORS[name], label=LABELS[name]) for name in names], fontsize=8)


def speed_bars(axes, results, group, names, baseline):
    """Each of ``names``' speed relative to ``baseline`` (above 1 is faster), one cluster per case."""
    cases = results["timings_us"][group]
    width = 0.7 / len(names)
    for index, name in enumerate(names):
        speed = [rows[baseline]["us"] / rows[name]["us"] for rows in cases.values()]
        offset = (index - (len(names) - 1) / 2) * width
        bars = axes.bar(
            [position + offset for position in range(len(cases))], speed, width, label=LABELS[name], color=COLORS[name]
        )
        axes.bar_label(bars, [f"{value:.2f}" for value in speed], fontsize=7)
    axes.axhline(1, color=COLORS[baseline], linestyle="--", label=LABELS[baseline])
    shapes = {case: " x ".join(f"{size:,}" for size in results["cases"][group][case]["shape"]) for case in cases}
    axes.set_xticks(range(len(cases)), [f"{case}\n{shapes[case]}" for case in cases])
    axes.set_ylabel(f"speed relative to {LABELS[baseline]}")
    axes.legend(fontsize=8)


class Table:
    """A table a page builds from its measurements: the last expression of a cell shows it as HTML."""

    def __init__(self, columns):
        self.columns = columns
        self.rows = []

    def add(self, aspect, *cells):
        self.rows.append((aspect, *cells))

    def _repr_html_(self):
        head = "".join(f"<th>{html.escape(str(title))}</th>" for title in ("", *self.columns))
        body = "".join(
            "<tr>" + "".join(f'<td style="text-align: left">{html.escape(str(cell))}</td>' for cell in row) + "</tr>"
            for row in self.rows
        )
        return f'<table class="table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def __repr__(self):  # where no HTML is shown: one line per row
        return "\n".join(" | ".join(str(cell) for cell in row) for row in [("", *self.columns), *self.rows])
