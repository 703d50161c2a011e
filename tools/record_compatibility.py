"""Record one `make check-torch` run as a row of the docs' compatibility table.

Usage: python tools/record_compatibility.py JUNIT_XML CSV_FILE

The row is keyed by the torch version running this script; a later run with
the same torch replaces it.
"""

import csv
import datetime
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy
import torch

COLUMNS = ["torch", "numpy", "checked on", "passed", "failed", "skipped", "result"]


def counts(junit_xml):
    suite = ElementTree.parse(junit_xml).getroot()
    suite = suite.find("testsuite") if suite.tag == "testsuites" else suite
    total, skipped = int(suite.get("tests")), int(suite.get("skipped"))
    failed = int(suite.get("failures")) + int(suite.get("errors"))
    return total - failed - skipped, failed, skipped


def main(junit_xml, csv_file):
    passed, failed, skipped = counts(junit_xml)
    row = {
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "checked on": datetime.date.today().isoformat(),
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
        "result": "works" if failed == 0 else "fails",
    }
    path = Path(csv_file)
    rows = list(csv.DictReader(path.open())) if path.exists() else []
    rows = [r for r in rows if r["torch"] != row["torch"]] + [row]
    rows.sort(key=lambda r: r["torch"])
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: torch {row['torch']} {row['result']} ({passed} passed, {failed} failed)")


if __name__ == "__main__":
    main(*sys.argv[1:])
