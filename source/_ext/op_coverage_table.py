"""``.. op-coverage:: op_coverage.json``: the op coverage page's chart and tables, built from the JSON.

The JSON is written by ``tools/op_coverage.py`` (``make coverage``); this
directive only reads it, at build time, so the page never goes stale
relative to the file. Cells are docutils nodes made from plain text, never
parsed as reST, so an error message full of ``*`` or backquotes cannot
break the ``-W`` build. The chart is an SVG written here from the same
numbers (no plotting library, nothing fetched), and its text takes the
page's colour, so it reads in the light and the dark theme.
"""

import collections
import html
import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

STATIC = Path(__file__).parent / "static"

# How an OpInfo fares, as the chart counts it (a sample that differs from the
# CPU outweighs how the samples ran): legend, short label, colour.
OUTCOMES = {
    "native": ("native", "native", "#2e7d32"),
    "fallback": ("needs the fallback", "fallback", "#e6a100"),
    "differs": ("differs from CPU", "differ", "#c62828"),
    "not compared": ("not compared", "not compared", "#9e9e9e"),
}
CHART_WIDTH = 760


def _cell(value):
    entry = nodes.entry()
    if isinstance(value, nodes.Node):
        entry += value
    else:
        entry += nodes.paragraph(text="" if value is None else str(value))
    return entry


def _table(headers, rows, widths):
    """A table whose columns take ``widths`` (relative) of the content column (op_coverage.css)."""
    table = nodes.table(classes=["colwidths-given", "op-coverage"])
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


def _code(*names):
    """A paragraph of ``names`` as code, separated by commas."""
    paragraph = nodes.paragraph()
    for index, name in enumerate(names):
        if index:
            paragraph += nodes.Text(", ")
        paragraph += nodes.literal(text=name)
    return paragraph


def _by_reason(cases):
    """Table rows for ``(name, reason)`` pairs: one row per reason, its names together."""
    names = collections.defaultdict(list)
    for name, reason in cases:
        names[reason].append(name)
    return [[_code(*grouped), reason] for reason, grouped in names.items()]


def _item(text):
    item = nodes.list_item()
    item += nodes.paragraph(text=text)
    return item


def outcome(row):
    if row["failed"]:
        return "differs"  # also every "unsupported" OpInfo: its samples raised on npy
    return row["status"]


def families(rows):
    """The rows grouped by family, the largest family first."""
    grouped = collections.defaultdict(list)
    for row in rows:
        grouped[row["family"]].append(row)
    return sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))


def family_id(family):
    return nodes.make_id(f"family {family}")


def _ran(row):
    """``native``, or ``fallback on`` the aten ops the CPU fallback ran, ..."""
    if not row["fallback_ops"]:
        return row["status"]
    return f"{row['status']} on " + ", ".join(op.removeprefix("aten::") for op in row["fallback_ops"])


def _passed(row):
    """``46/48``, ``*`` when samples were left out by the per-dtype limit, and the skipped count."""
    text = f"{row['passed']}/{row['passed'] + row['failed']}" + ("*" if row["truncated"] else "")
    return text + (f", {row['skipped']} skipped" if row["skipped"] else "")


def _footnote(paragraph, number, lines):
    """Append footnote reference ``number`` to ``paragraph``; the footnote, holding ``lines``."""
    note_id, ref_id = f"op-coverage-note-{number}", f"op-coverage-ref-{number}"
    paragraph += nodes.Text(" ")
    paragraph += nodes.footnote_reference("", str(number), ids=[ref_id], refid=note_id)
    note = nodes.footnote(ids=[note_id], backrefs=[ref_id])
    note += nodes.label(text=str(number))
    for line in lines:
        note += nodes.paragraph(text=line)
    return note


def chart_svg(grouped):
    """A horizontal stacked bar per family: how many of its OpInfos have each outcome."""
    label_width, bar_width, row_height, top = 190, 270, 24, 34
    longest = max(len(rows) for _, rows in grouped)
    totals = collections.Counter(outcome(row) for _, rows in grouped for row in rows)
    height = top + row_height * len(grouped)
    parts = [
        f'<svg class="op-coverage-chart" viewBox="0 0 {CHART_WIDTH} {height}" role="img" '
        f'aria-label="OpInfos per family: native, fallback, differing from CPU" '
        f'font-size="13" fill="currentColor">'
    ]
    x = 0
    for key, (label, _, colour) in OUTCOMES.items():
        parts.append(
            f'<rect x="{x}" y="6" width="12" height="12" fill="{colour}"/>'
            f'<text x="{x + 17}" y="17">{html.escape(label)}: {totals[key]}</text>'
        )
        x += 180
    for index, (family, rows) in enumerate(grouped):
        y = top + index * row_height
        counts = collections.Counter(outcome(row) for row in rows)
        parts.append(
            f'<a href="#{family_id(family)}"><text x="{label_width - 8}" y="{y + 16}" '
            f'text-anchor="end">{html.escape(family)}</text></a>'
        )
        x = label_width
        for key, (label, _, colour) in OUTCOMES.items():
            if counts[key]:
                width = bar_width * counts[key] / longest
                tooltip = html.escape(f"{family}: {counts[key]} {label}")
                parts.append(
                    f'<rect x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="16" fill="{colour}">'
                    f"<title>{tooltip}</title></rect>"
                )
                x += width
        not_native = "".join(
            f", {counts[key]} {short}" for key, (_, short, _) in OUTCOMES.items() if counts[key] and key != "native"
        )
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 16}">{len(rows)}{not_native}</text>')
    parts.append("</svg>")
    return "".join(parts)


class OpCoverage(SphinxDirective):
    """Summary, chart, per-family tables, fallback calls and skip list of an op_coverage.json."""

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
            "dtypes: "
            + ", ".join(data["dtypes"])
            + "; "
            + (f"at most {limit} samples per dtype and OpInfo" if limit else "every sample")
            + f", and none after {data['seconds_per_opinfo']:g} s on one OpInfo (less if the run would"
            f" exceed {data['total_seconds_target']:g} s)"
        )
        facts += _item(
            f"measured with torch {data['torch']} in {data['seconds']['total']:g} s "
            f"(probe {data['seconds']['probe']:g} s)"
        )
        return [facts]

    def _chart(self, data):
        return [nodes.raw("", chart_svg(families(data["results"])), format="html")]

    def _results(self, data):
        """A section per family, each with a table whose long cells are footnotes under it."""
        sections = []
        footnotes = 0
        for family, rows in families(data["results"]):
            section = nodes.section(ids=[family_id(family)], names=[nodes.fully_normalize_name(family)])
            section += nodes.title(text=family)
            namespace = family.removeprefix("torch.") + "." if family.startswith("torch.") else ""
            table_rows, notes = [], []
            for row in rows:
                differs = nodes.paragraph(text=", ".join(row["failures"]))
                if row["failures"]:
                    footnotes += 1
                    notes.append(
                        _footnote(
                            differs,
                            footnotes,
                            [f"{row['name']}, {dtype}: {message}" for dtype, message in row["failures"].items()],
                        )
                    )
                name = row["name"].removeprefix(namespace)
                table_rows.append([_code(name), _ran(row), _passed(row), differs])
            section += _table(["OpInfo", "ran", "passed", "differs in"], table_rows, [32, 30, 16, 22])
            section.extend(notes)
            sections.append(section)
        return sections

    def _fallbacks(self, data):
        calls = data["fallback_calls"]
        if not calls:
            return [nodes.paragraph(text="No op fell back during the run.")]
        rows = [[_code(op), count] for op, count in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))]
        return [_table(["aten op", "fallback calls"], rows, [30, 10])]

    def _expected(self, data):
        cases = [(f"{entry['opinfo']} ({entry['dtype']})", entry["reason"]) for entry in data["expected_failures"]]
        cases += [(name, f"not compared, random: {reason}") for name, reason in data["random_samples"].items()]
        summed = data["summation_tolerance"]
        tolerance = nodes.paragraph(
            text=(
                f"Compared within rtol {summed['rtol']:g} and atol {summed['atol']:g} in "
                f"{' and '.join(summed['dtypes'])}, since they sum products in another order than the CPU "
                f"(NumPy's BLAS), which changes the last bits by machine: {', '.join(summed['opinfos'])}."
            )
        )
        return [_table(["OpInfo (dtype)", "why npy differs"], _by_reason(cases), [35, 65]), tolerance]

    def _errors(self, data):
        errors = data["error_inputs"]
        summary = nodes.paragraph(
            text=(
                f"{errors['matched']} of the {errors['expected']} error inputs the CPU answers as PyTorch "
                f"expects are answered the same way on npy ({errors['cases']} cases of {errors['opinfos']} "
                f"OpInfos; the CPU itself answers {errors['cpu_differs']} otherwise). The others:"
            )
        )
        rows = _by_reason(errors["expected_failures"].items())
        return [summary, _table(["error input", "why npy answers otherwise"], rows, [35, 65])]

    def _gradients(self, data):
        if "gradcheck" not in data:
            raise self.error("op_coverage.json has no gradcheck counts: run `make coverage`")
        grads = data["gradcheck"]
        checked = grads["passed"] + grads["failed"]
        skipped = "".join(f"; {count} skipped: {reason}" for reason, count in grads["skip_reasons"].items())
        fell_back = ", ".join(op.removeprefix("aten::") for op in grads["fallback_ops"])
        summary = nodes.paragraph(
            text=(
                f"{grads['passed']} of the {checked} {grads['dtype']} samples checked pass gradcheck on npy "
                f"({grads['native_samples']} natively, {grads['fallback_samples']} with the fallback), from "
                f"{grads['opinfos']} differentiable OpInfos, in {grads['seconds']:g} s{skipped}."
                + (f" Ops that fell back during the checks: {fell_back}." if fell_back else "")
            )
        )
        rows = [[_code(name), "every sample", reason] for name, reason in grads["expected_failures"].items()]
        rows += [
            [_code(name), sum(reasons.values()), "not checked: " + "; ".join(reasons)]
            for name, reasons in grads["opinfos_skipped"].items()
        ]
        return [summary, _table(["OpInfo", "samples", "why"], rows, [20, 8, 50])]

    def _skips(self, data):
        rows = [[_code(name), reason] for name, reason in data["opinfos_skipped"].items()]
        return [_table(["OpInfo", "why it is not compared"], rows, [35, 65])]


class NpyKernels(SphinxDirective):
    """Every aten overload with an npy kernel, by family (the module of backend_pkg/ops that registers it)."""

    def run(self):
        import backend_pkg  # the kernels as the installed package registers them, read at build time

        families = collections.defaultdict(list)
        for op, kernel in backend_pkg.ops.KERNELS.items():
            families[kernel.__module__.rsplit(".", 1)[-1]].append(op.name().removeprefix("aten::"))
        total = nodes.paragraph(text=f"{len(backend_pkg.registered_ops())} kernels, by family:")
        rows = [[f"{family} ({len(names)})", _code(*sorted(names))] for family, names in sorted(families.items())]
        return [total, _table(["family", "aten overloads"], rows, [20, 80])]


def _add_stylesheet(app):
    """The page's CSS, kept beside this extension: table cells may break long names."""
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file("op_coverage.css")


def setup(app):
    app.add_directive("op-coverage", OpCoverage)
    app.add_directive("npy-kernels", NpyKernels)
    app.connect("builder-inited", _add_stylesheet)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
