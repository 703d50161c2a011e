"""``large``: a 1024x1024 matmul and 1e6-element ``add`` and ``mul``, on ``npy``, NumPy and CPU, timed as the
small ops are (:func:`benchmarks.groups.small.measure_cases`), without a floor."""

from benchmarks.groups.small import measure_cases
from benchmarks.shared import Case, describe_case

TITLE = "large ops: npy, CPU, NumPy"
OWN_SETTINGS = None
LARGE = {
    "matmul": Case("a @ b", (1024, 1024)),
    "add": Case("a + b", (1_000_000,)),
    "mul": Case("a * b", (1_000_000,)),
}


def measure_group(settings, quick):
    return measure_cases(LARGE, settings), {}


def describe():
    return {name: describe_case(case) for name, case in LARGE.items()}
