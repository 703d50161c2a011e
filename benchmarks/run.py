"""How fast the npy device is, side by side with CPU eager, NumPy and the dispatcher floor.

Run ``make bench`` (or ``.venv/bin/python benchmarks/run.py``) to measure and
rewrite ``source/benchmarks.json``, which the Performance gallery page plots
and other pages quote. The file is generated: never edit it by hand.
``--quick`` runs every row with tiny iteration counts (seconds, not
minutes), for the tests; its numbers are too rough to commit.
The ratios it reports, each with the target it passes at or below, are
the rows of ``benchmarks/targets.csv``: a ratio's formula names its
timing rows (``group.case.implementation``).

What is measured is a table of groups (:data:`benchmarks.groups.GROUPS`), one
module each in ``benchmarks/groups/`` whose docstring says what it times:
``small``, ``large``, ``mlp``, ``guard``, ``eager``, ``models``, ``backends``,
``zoo``, ``distributed``. How a row is timed is ``benchmarks/timing.py``.
This script runs the groups asked for, in the table's order, and writes their
rows, what each case times, the ratios and the machine into one JSON file. Its
internal modes (``--floor``, ``--backend``, ``--guard-in-cpp``,
``--zoo-cases``, ``--import-time``) are the processes some groups start: a
process has one PrivateUse1 backend, and some rows need their own.
"""

import argparse
import contextlib
import csv
import datetime
import importlib
import json
import os
import platform
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The groups import each other as benchmarks.*, and the distributed group imports ddp_demo: folders of the
# checkout, not of the installed package.
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.groups import GROUPS  # noqa: E402
from benchmarks.groups.backends import BACKEND_MODULES, serve_backend_turns  # noqa: E402  (no backend_pkg)
from benchmarks.timing import FULL, OUTLIER_SHARE, QUICK  # noqa: E402

OUTPUT = ROOT / "source" / "benchmarks.json"
TARGETS = Path(__file__).with_name("targets.csv")
# The top-level keys of the JSON a group may fill (measure_group's second result), None when it did not run.
GROUP_EXTRAS = ("cpp_vs_python", "guard_calls_per_call", "zoo_aten_ops_per_step")


@dataclass(frozen=True)
class Ratio:
    """A target the backend is measured against: one timing row over others, summed."""

    description: str
    formula: str  # "numerator / denominator": timing rows "group.case.implementation", "(a + b)" for a sum
    target: float  # the ratio passes at or below it

    @property
    def numerator(self):
        return self.formula.split(" / ")[0]

    @property
    def denominator(self):
        return tuple(self.formula.split(" / ")[1].strip("()").split(" + "))


def load_ratios(path=TARGETS):
    """The targets of ``benchmarks/targets.csv``, by name: a table, so that a target is one row to read or change."""
    with open(path, newline="") as table:
        return {
            row["name"]: Ratio(row["description"], row["formula"], float(row["target"]))
            for row in csv.DictReader(table)
        }


RATIOS = load_ratios()


def group_module(name):
    """The module of group ``name``; imported when asked, as most of them import ``backend_pkg``."""
    return importlib.import_module(f"benchmarks.groups.{name}")


def group_settings(name, settings, quick):
    """The settings group ``name`` runs with: its own in a full run, where it has some."""
    own = group_module(name).OWN_SETTINGS
    return settings if quick or own is None else own


# Results.


def row_at(timings, path):
    group, case, implementation = path.split(".")
    return timings[group][case][implementation]


def evaluate(ratio, timings):
    numerator = row_at(timings, ratio.numerator)
    denominator = [row_at(timings, path) for path in ratio.denominator]
    result = {"description": ratio.description, "formula": ratio.formula, "target": ratio.target}
    missing = [row["unavailable"] for row in (numerator, *denominator) if row["us"] is None]
    if missing:
        return {**result, "value": None, "status": "unavailable", "reason": missing[0]}
    value = numerator["us"] / sum(row["us"] for row in denominator)
    return {**result, "value": round(value, 3), "status": "PASS" if value <= ratio.target else "FAIL", "reason": None}


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_blas():
    """NumPy's BLAS library, the kernel it chose for this CPU, and its threads (threadpoolctl)."""
    from threadpoolctl import threadpool_info

    for pool in threadpool_info():
        if pool["user_api"] == "blas":
            return f"{pool['internal_api']} {pool.get('architecture', '')}, {pool['num_threads']} threads".strip()
    return "unknown"


def describe_cases():
    """What each case of every group times (a run of some groups describes every group)."""
    return {name: group_module(name).describe() for name in GROUPS}


@contextlib.contextmanager
def without_fallback_warnings():
    """The CPU fallback warns once per op; which ops fall back is the Op coverage page's story."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="npy device")
        yield


def run(settings, quick, groups=GROUPS, progress=print):
    """Measure ``groups`` (all of :data:`GROUPS` for ``make bench``): the JSON ``make bench`` writes."""
    # Other work on the machine slows every row: the reader of the numbers should know of it.
    load_at_start = round(os.getloadavg()[0], 2)
    start = time.perf_counter()
    timings, extras = {}, dict.fromkeys(GROUP_EXTRAS)
    with without_fallback_warnings():
        for name in (group for group in GROUPS if group in groups):
            module = group_module(name)
            progress(module.TITLE)
            timings[name], recorded = module.measure_group(group_settings(name, settings, quick), quick)
            extras.update(recorded)
    ratios = {
        name: ratio
        for name, ratio in RATIOS.items()
        if {path.split(".")[0] for path in (ratio.numerator, *ratio.denominator)} <= timings.keys()
    }
    return {
        "generated_by": "benchmarks/run.py (make bench); do not edit by hand",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "machine": {
            "cpu_count": os.cpu_count(),
            "cpu_model": cpu_model(),
            "torch_threads": torch.get_num_threads(),
            "numpy_blas": numpy_blas(),
            "load_average_at_start": load_at_start,
        },
        "settings": {**asdict(settings), "outlier_share": OUTLIER_SHARE},
        "model_settings": asdict(group_settings("models", settings, quick)),
        "zoo_settings": asdict(group_settings("zoo", settings, quick)),
        "cases": describe_cases(),
        "timings_us": timings,
        **extras,
        "ratios": {name: evaluate(ratio, timings) for name, ratio in ratios.items()},
        "merged_groups": [],
        "seconds": round(time.perf_counter() - start, 1),
    }


def merged(committed, data):
    """``committed`` (a full run's JSON) with the groups of ``data`` (a run of some groups) in place
    of its own, every ratio evaluated again, and a note of each merged group's date, machine (its load
    included) and versions."""
    timings = {**committed["timings_us"], **data["timings_us"]}
    notes = [note for note in committed.get("merged_groups", []) if note["group"] not in data["timings_us"]]
    notes += [
        {"group": group, "date": data["date"], "machine": data["machine"], "versions": data["versions"]}
        for group in data["timings_us"]
    ]
    return {
        **committed,
        "cases": data["cases"],  # a run of some groups describes every group
        "timings_us": {group: timings[group] for group in GROUPS if group in timings},
        "zoo_settings": data["zoo_settings"],
        "merged_groups": notes,
        "zoo_aten_ops_per_step": data["zoo_aten_ops_per_step"]
        if "zoo" in data["timings_us"]
        else committed.get("zoo_aten_ops_per_step"),
        "ratios": {name: evaluate(ratio, timings) for name, ratio in RATIOS.items()},
    }


def format_us(value):
    return "-" if value is None else f"{value:,.1f}"


def report(data):
    """The timings and the ratio table, as text."""
    lines = []
    for group, cases in data["timings_us"].items():
        implementations = list(dict.fromkeys(name for rows in cases.values() for name in rows))
        settings = data["zoo_settings" if group == "zoo" else "model_settings" if group == "models" else "settings"]
        lines.append(f"\n{group} (µs per call, {settings['rounds'] * settings['repeat']} repeats)")
        widths = [max(12, len(name)) + 2 for name in implementations]
        case_width = max(12, *map(len, cases))
        header = "".join(f"{name:>{width}}" for name, width in zip(implementations, widths))
        lines.append(f"  {'':{case_width}}" + header)
        for case, rows in cases.items():
            lines.append(
                f"  {case:{case_width}}"
                + "".join(
                    f"{format_us(rows[name]['us']) if name in rows else '':>{width}}"
                    for name, width in zip(implementations, widths)
                )
            )
    if data["cpp_vs_python"]:
        build, imports = data["cpp_vs_python"]["twin_build_seconds"], data["cpp_vs_python"]["first_import_seconds"]
        lines.append(
            f"\nC++ twin build: cold {build['cold']} s, cached {build['cached']} s; first import (s): "
            + ", ".join(f"{name} {seconds}" for name, seconds in imports.items())
        )
    lines.append(f"\n{'ratio':48}{'value':>8}  {'target':>8}  result")
    for ratio in data["ratios"].values():
        value = "-" if ratio["value"] is None else f"{ratio['value']:.2f}"
        lines.append(f"{ratio['description']:48}{value:>8}  {'<= ' + str(ratio['target']):>8}  {ratio['status']}")
    for ratio in data["ratios"].values():
        if ratio["reason"]:
            lines.append(f"  {ratio['description']}: {ratio['reason']}")
    return "\n".join(lines)


def serve_internal_mode(options, settings):
    """The processes groups start: True when ``options`` asked for one of them and it ran."""
    if options.backend:
        serve_backend_turns(BACKEND_MODULES[options.backend], settings)
    elif options.import_time:
        start = time.perf_counter()
        importlib.import_module(options.import_time)
        print(time.perf_counter() - start)
    elif options.guard_in_cpp:
        from benchmarks.device_guard_in_cpp import load_guard_in_cpp

        load_guard_in_cpp()  # before backend_pkg registers its guard
        group_module("guard").serve_guard_in_cpp_turns(settings)
    elif options.zoo_cases:
        with without_fallback_warnings():
            zoo_settings = group_settings("zoo", settings, options.quick)
            group_module("zoo").serve_zoo_turns(options.zoo_cases, zoo_settings, options.quick)
    elif options.floor:
        print(json.dumps(group_module("small").measure_floor(settings)))
    else:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the JSON (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="tiny iteration counts: checks the script, not the speed")
    parser.add_argument(
        "--groups",
        nargs="+",
        choices=GROUPS,
        default=GROUPS,
        help="measure only these groups (then pass --output: the committed JSON holds every group)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help=f"with --groups: measure them and put them in place of their rows in {OUTPUT.name}, "
        "which keeps the others (its merged_groups notes when, on what machine, under what load)",
    )
    parser.add_argument(
        "--merge-from",
        type=Path,
        metavar="JSON",
        help=f"put the groups of JSON (written by a --groups run, not --quick) in place of theirs in "
        f"{OUTPUT.name}, then exit",
    )
    parser.add_argument(
        "--floor", action="store_true", help="internal: time the small ops over no-op kernels, print the rows as JSON"
    )
    parser.add_argument(
        "--backend",
        choices=BACKEND_MODULES,
        help="internal: import this minimal backend, then time one turn of the C++ vs Python rows per line of input",
    )
    parser.add_argument(
        "--guard-in-cpp",
        action="store_true",
        help="internal: load device_guard_in_cpp.cpp, import backend_pkg, then time one turn of "
        "the Inductor training step per line of input",
    )
    parser.add_argument(
        "--zoo-cases",
        nargs="+",
        metavar="CASE",
        help="internal: build these cases of the zoo group, then time one turn of their rows per line of input",
    )
    parser.add_argument("--import-time", metavar="MODULE", help="internal: print how long importing MODULE takes")
    options = parser.parse_args(argv)
    settings = QUICK if options.quick else FULL
    if serve_internal_mode(options, settings):
        return 0
    if options.quick and options.output.resolve() == OUTPUT:
        parser.error(f"--quick numbers are too rough for {OUTPUT.relative_to(ROOT)}: pass --output")
    if options.merge_from:
        data = json.loads(options.merge_from.read_text())
        if data["quick"]:
            parser.error(f"--quick numbers are too rough for {OUTPUT.relative_to(ROOT)}")
        return write(merged(json.loads(OUTPUT.read_text()), data), OUTPUT)
    if options.merge and (options.quick or options.output.resolve() != OUTPUT):
        parser.error(f"--merge writes full-run numbers into {OUTPUT.relative_to(ROOT)}: no --quick, no --output")
    if set(options.groups) != set(GROUPS) and options.output.resolve() == OUTPUT and not options.merge:
        parser.error(f"{OUTPUT.relative_to(ROOT)} holds every group: pass --output with --groups, or --merge")
    data = run(settings, options.quick, options.groups, progress=lambda text: print(text, file=sys.stderr))
    if options.merge:
        data = merged(json.loads(OUTPUT.read_text()), data)
    return write(data, options.output)


def write(data, output):
    output.write_text(json.dumps(data, indent=1) + "\n")
    print(report(data))
    print(f"\n{data['seconds']} s; wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
