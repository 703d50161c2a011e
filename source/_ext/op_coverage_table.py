"""``.. op-coverage:: op_coverage.json``: the op coverage page's tables, built from the JSON.

The JSON is written by ``tools/op_coverage.py`` (``make coverage``); this
directive only reads it, at build time, so the page never goes stale
relative to the file. Cells are docutils nodes made from plain text, never
parsed as reST, so an error message full of ``*`` or backquotes cannot
break the ``-W`` build.
"""

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective


def _cell(value):
    entry = nodes.entry()
    if isinstance(value, nodes.Node):
        entry += value
    else:
        entry += nodes.paragraph(text="" if value is None else str(value))
    return entry


def _table(headers, rows, widths, classes=()):
    table = nodes.table(classes=list(classes))
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header_row = nodes.row()
    for header in headers:
        header_row += _cell(header)
    head += header_row
    group += head
    body = nodes.tbody()
    for values in rows:
        row = nodes.row()
        for value in values:
            row += _cell(value)
        body += row
    group += body
    return table


def _code(text):
    paragraph = nodes.paragraph()
    paragraph += nodes.literal(text=text)
    return paragraph


def _item(text):
    item = nodes.list_item()
    item += nodes.paragraph(text=text)
    return item


class OpCoverage(SphinxDirective):
    """Summary, per-OpInfo table, fallback calls and skip list of an op_coverage.json."""

    required_arguments = 1
    option_spec = {"section": directives.unchanged}

    def run(self):
        relative, path = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(relative)
        data = json.loads(Path(path).read_text())
        section = self.options.get("section", "summary")
        build = getattr(self, f"_{section}", None)
        if build is None:
            raise self.error(f"op-coverage: unknown section {section!r}")
        return build(data)

    def _summary(self, data):
        totals = data["totals"]
        compared = totals["passed"] + totals["failed"]
        limit = data["max_samples_per_dtype"]
        statuses = {}
        for row in data["results"]:
            statuses[row["status"]] = statuses.get(row["status"], 0) + 1
        facts = nodes.bullet_list()
        facts += _item(f"aten overloads with a native npy kernel: {data['native_kernels']}")
        facts += _item(
            f"OpInfos covered: {data['opinfos_covered']} of {data['opinfos_in_db']} in op_db ("
            + ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
            + f"); {data['opinfos_probed_not_native']} more were probed and need the fallback, "
            f"{len(data['opinfos_skipped'])} OpInfo names are on the skip list"
        )
        facts += _item(
            f"samples passed: {totals['passed']} of {compared} compared "
            f"({totals['native_samples']} ran natively, {totals['fallback_samples']} needed the fallback); "
            f"{totals['skipped']} skipped"
        )
        facts += _item(
            "dtypes: " + ", ".join(data["dtypes"]) + "; "
            + (f"at most {limit} samples per dtype and OpInfo" if limit else "every sample")
            + f", and none after {data['seconds_per_opinfo']:g} s on one OpInfo (less if the run would"
            f" exceed {data['total_seconds_target']:g} s)"
        )
        facts += _item(
            f"measured with torch {data['torch']} in {data['seconds']['total']:g} s "
            f"(probe {data['seconds']['probe']:g} s)"
        )
        return [facts]

    def _results(self, data):
        rows = []
        for row in data["results"]:
            compared = row["passed"] + row["failed"]
            rows.append([
                _code(row["name"]),
                row["status"],
                f"{row['passed']}/{compared}" + ("*" if row["truncated"] else ""),
                row["skipped"],
                ", ".join(op.removeprefix("aten::") for op in row["fallback_ops"]),
                row["first_failure"] or "",
            ])
        return [_table(["OpInfo", "native / fallback", "passed / total", "skipped",
                        "fell back on", "first failure"], rows, [18, 10, 8, 6, 18, 40],
                       classes=["op-coverage"])]

    def _fallbacks(self, data):
        calls = data["fallback_calls"]
        if not calls:
            return [nodes.paragraph(text="No op fell back during the run.")]
        rows = [[_code(op), count] for op, count in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))]
        return [_table(["aten op", "fallback calls"], rows, [30, 10])]

    def _expected(self, data):
        rows = [[_code(entry["opinfo"]), entry["dtype"], entry["reason"]] for entry in data["expected_failures"]]
        rows += [[_code(name), "any", f"not compared, random: {reason}"]
                 for name, reason in data["random_samples"].items()]
        return [_table(["OpInfo", "dtype", "why npy differs"], rows, [20, 8, 50])]

    def _errors(self, data):
        errors = data["error_inputs"]
        summary = nodes.paragraph(text=(
            f"{errors['matched']} of the {errors['expected']} error inputs the CPU answers as PyTorch "
            f"expects are answered the same way on npy ({errors['cases']} cases of {errors['opinfos']} "
            f"OpInfos; the CPU itself answers {errors['cpu_differs']} otherwise). The others:"
        ))
        rows = [[_code(case), reason] for case, reason in errors["expected_failures"].items()]
        return [summary, _table(["error input", "why npy answers otherwise"], rows, [20, 50])]

    def _gradients(self, data):
        if "gradcheck" not in data:
            raise self.error("op_coverage.json has no gradcheck counts: run `make coverage`")
        grads = data["gradcheck"]
        checked = grads["passed"] + grads["failed"]
        skipped = "".join(f"; {count} skipped: {reason}" for reason, count in grads["skip_reasons"].items())
        fell_back = ", ".join(op.removeprefix("aten::") for op in grads["fallback_ops"])
        summary = nodes.paragraph(text=(
            f"{grads['passed']} of the {checked} {grads['dtype']} samples checked pass gradcheck on npy "
            f"({grads['native_samples']} natively, {grads['fallback_samples']} with the fallback), from "
            f"{grads['opinfos']} differentiable OpInfos, in {grads['seconds']:g} s{skipped}."
            + (f" Ops that fell back during the checks: {fell_back}." if fell_back else "")
        ))
        rows = [[_code(name), "every sample", reason] for name, reason in grads["expected_failures"].items()]
        rows += [[_code(name), sum(reasons.values()), "not checked: " + "; ".join(reasons)]
                 for name, reasons in grads["opinfos_skipped"].items()]
        return [summary, _table(["OpInfo", "samples", "why"], rows, [20, 8, 50])]

    def _skips(self, data):
        rows = [[_code(name), reason] for name, reason in data["opinfos_skipped"].items()]
        return [_table(["OpInfo", "why it is not compared"], rows, [20, 50])]


def setup(app):
    app.add_directive("op-coverage", OpCoverage)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
