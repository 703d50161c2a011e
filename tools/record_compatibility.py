"""Record one `make check-torch` run as a row of the docs' compatibility table.

Usage: python tools/record_compatibility.py JUNIT_XML CSV_FILE

The run is the whole test suite; the docs tests (the modules under
``tests/docs/``) and the backend's tests (every other one) are counted apart,
each as passed of run (skipped tests are not run). The row is keyed by the torch version running
this script; a later run with the same torch replaces it.
"""

import csv
import datetime
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy
import torch

# The docs tests are the modules of this folder, as pytest names them in a test case's ``classname``.
DOCS_PACKAGE = "tests.docs"
COLUMNS = ["torch", "numpy", "checked on", "docs tests passed", "backend tests passed", "skipped", "result"]


def counts(junit_xml):
    """``{"docs": [passed, run], "backend": [passed, run]}`` and the number skipped.

    pytest names each test case's module in its ``classname`` (``tests.docs.test_docs``,
    or ``tests.docs.test_docs.TestClass``); a module that fails to import is a failed case.
    """
    tally = {"docs": [0, 0], "backend": [0, 0]}
    skipped = 0
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        outcomes = {child.tag for child in case} & {"failure", "error", "skipped"}
        if outcomes == {"skipped"}:
            skipped += 1
            continue
        classname = case.get("classname") or case.get("name")
        group = "docs" if classname.startswith(DOCS_PACKAGE + ".") else "backend"
        tally[group][1] += 1
        tally[group][0] += not outcomes
    return tally, skipped


def main(junit_xml, csv_file):
    tally, skipped = counts(junit_xml)
    works = all(passed == run for passed, run in tally.values())
    row = {
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "checked on": datetime.date.today().isoformat(),
        "docs tests passed": "{}/{}".format(*tally["docs"]),
        "backend tests passed": "{}/{}".format(*tally["backend"]),
        "skipped": skipped,
        "result": "works" if works else "fails",
    }
    path = Path(csv_file)
    rows = list(csv.DictReader(path.open())) if path.exists() else []
    rows = [r for r in rows if r["torch"] != row["torch"]] + [row]
    rows.sort(key=lambda r: r["torch"])
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(
        f"{path}: torch {row['torch']} {row['result']} (docs {row['docs tests passed']}, "
        f"backend {row['backend tests passed']}, {skipped} skipped)"
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
