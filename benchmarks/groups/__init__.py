"""The groups of ``benchmarks/run.py``, one module each, in the order a full run measures them.

Each module has ``TITLE`` (what ``run.py`` prints as it starts the group), ``OWN_SETTINGS`` (the
group's :class:`benchmarks.timing.Settings` for a full run, or None for the run's),
``measure_group(settings, quick)`` (the group's timings, and what else it records at the top of the
JSON, by key) and ``describe()`` (what each case times, for the JSON's ``cases``).
"""

GROUPS = ("small", "large", "mlp", "guard", "eager", "models", "backends", "zoo", "distributed")
