"""tools/plant_bugs.py: every planted bug still applies to the code as it is, once.

Running the plants takes minutes (``.venv/bin/python tools/plant_bugs.py``);
this only keeps the record from going stale when the planted code changes.
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import plant_bugs  # noqa: E402


@pytest.mark.parametrize("plant", plant_bugs.PLANTS, ids=lambda plant: plant.name)
def test_plant_applies_once(plant, tmp_path):
    source = ROOT / plant.path
    copy = tmp_path / plant.path
    copy.parent.mkdir(parents=True)
    copy.write_text(source.read_text())
    plant_bugs.apply(plant, tmp_path)
    assert copy.read_text() != source.read_text()
    for test in plant.tests:
        assert (ROOT / test).is_file(), test


def test_plant_names_are_unique_and_the_record_lists_them():
    names = [plant.name for plant in plant_bugs.PLANTS]
    assert len(names) == len(set(names))
    record = plant_bugs.RECORD.read_text()
    assert [name for name in names if f"`{name}`" not in record] == [], "run tools/plant_bugs.py --write"
    assert "survived" not in record
