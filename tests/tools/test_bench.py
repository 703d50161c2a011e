"""The benchmark script (benchmarks/run.py) in its quick mode, and the JSON it committed to source/."""

import importlib.util
import json
import subprocess
import sys

import pytest
import torch
from sitebuild import ROOT
from torch._dynamo.utils import counters

from benchmarks import shared
from benchmarks.groups import backends as backends_group
from benchmarks.groups import guard as guard_group
from benchmarks.groups import large as large_group
from benchmarks.groups import mlp as mlp_group
from benchmarks.groups import models as models_group
from benchmarks.groups import small as small_group
from benchmarks.groups import zoo as zoo_group

SCRIPT = ROOT / "benchmarks" / "run.py"


def load_script():
    spec = importlib.util.spec_from_file_location("benchmarks_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = load_script()


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """The JSON of one ``--quick`` run (how fast it runs is the bench's business, not a test's)."""
    output = tmp_path_factory.mktemp("bench") / "benchmarks.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(output.read_text())


@pytest.fixture(scope="module")
def committed():
    return json.loads(bench.OUTPUT.read_text())


def schema(value):
    """The layout of a JSON value: every key, nested; lists and values reduced to their kind."""
    if isinstance(value, dict):
        return {key: schema(item) for key, item in value.items()}
    return "list" if isinstance(value, list) else "value"


def wider_zoo_cases():
    return [f"{family}_width{width}" for family, widths in zoo_group.ZOO_WIDTHS.items() for width in widths]


def expected_rows():
    """group.case.implementation of every row the script promises."""
    small = [
        f"small.{case}.{name}"
        for case in small_group.SMALL
        for name in (*small_group.OPERANDS, "floor", "floor_with_result")
    ]
    large = [f"large.{case}.{name}" for case in large_group.LARGE for name in small_group.OPERANDS]
    mlp = [f"mlp.{step}.{variant}" for step in ("forward", "train_step") for variant in mlp_group.MLP_VARIANTS]
    guard = [f"guard.{case}.{variant}" for case in guard_group.GUARD_CASES for variant in guard_group.INDUCTOR_VARIANTS]
    eager = [f"eager.mlp_train_step.{device}" for device in ("npy", "cpu")]
    models = [f"models.resnet_block.{device}" for device in ("npy", "cpu")]
    models += [f"models.large_mlp_forward.{variant}" for variant in models_group.LARGE_MLP_VARIANTS]
    backend_cases = (*backends_group.BACKEND_CASES, "mlp_forward", "mlp_train_step")
    backends = [f"backends.{case}.{backend}" for case in backend_cases for backend in backends_group.BACKENDS]
    distributed = [f"distributed.ddp_step.{device}" for device in ("npy", "cpu")]
    zoo = [f"zoo.{family}.{variant}" for family in zoo_group.load_zoo().RECIPES for variant in zoo_group.ZOO_VARIANTS]
    zoo += [f"zoo.{case}.{variant}" for case in wider_zoo_cases() for variant in zoo_group.ZOO_EAGER_VARIANTS]
    zoo += [f"zoo.{case}.{variant}" for case in zoo_group.ZOO_CONVOLUTIONS for variant in zoo_group.ZOO_EAGER_VARIANTS]
    zoo += [f"zoo.{family}.{zoo_group.FOREACH_VARIANT}" for family in zoo_group.ZOO_FOREACH]
    zoo += [f"zoo.{family}.{zoo_group.GRAD_TRACED_VARIANT}" for family in zoo_group.ZOO_GRAD_TRACED]
    return small + large + mlp + guard + eager + models + backends + distributed + zoo


def test_quick_run_has_every_row(quick_run):
    data = quick_run
    assert data["quick"] is True
    compiled = {*guard_group.INDUCTOR_VARIANTS, *zoo_group.ZOO_COMPILED_VARIANTS, zoo_group.GRAD_TRACED_VARIANT}
    for path in expected_rows():
        row = bench.row_at(data["timings_us"], path)
        if path.split(".")[-1] in compiled:
            assert row["us"] is None and row["unavailable"] == shared.QUICK_SKIPS_INDUCTOR, path
            continue
        assert row["us"] > 0 and row["unavailable"] is None, path
        assert row["min_us"] <= row["us"] <= row["median_us"], path
    counted = [
        f"{group}.{case}.{name}"
        for group, cases in data["timings_us"].items()
        for case, rows in cases.items()
        for name in rows
    ]
    assert sorted(counted) == sorted(expected_rows())


def test_quick_run_has_every_ratio_with_its_target(quick_run):
    data = quick_run
    assert {name: ratio["target"] for name, ratio in data["ratios"].items()} == {
        "small_add_npy_vs_cpu": 2.5,
        "small_add_npy_vs_floor_plus_numpy": 1.5,
        "large_matmul_npy_vs_numpy": 1.1,
        "mlp_forward_compiled_npy_vs_cpu": 1.0,
        "mlp_train_step_compiled_npy_vs_cpu": 1.5,
        "mlp_forward_inductor_npy_vs_cpu": 1.2,
        "mlp_train_step_inductor_npy_vs_cpu": 1.3,
        "mlp_train_step_inductor_npy_vs_cpu_guard_in_cpp": 1.3,
        "large_mlp_forward_inductor_npy_vs_cpu_eager": 1.0,
        "eager_mlp_train_step_npy_vs_cpu": 4.0,
        "resnet_block_npy_vs_cpu": 3.0,
        "ddp_step_npy_vs_cpu": 4.0,
        **{
            f"zoo_{family}_{kind}_npy_vs_cpu": target
            for family in zoo_group.load_zoo().RECIPES
            for kind, target in (("eager", 3.0), ("inductor", 1.5), ("reduce_overhead", 1.5))
        },
        "zoo_transformer_language_model_eager_foreach_npy_vs_cpu": 3.0,
        "zoo_transformer_language_model_inductor_grad_traced_npy_vs_cpu": 1.5,
        "zoo_depthwise_conv_npy_vs_cpu": 3.0,
        "zoo_conv3d_npy_vs_cpu": 3.0,
    }
    for name, ratio in data["ratios"].items():
        if ratio["value"] is None:
            assert ratio["status"] == "unavailable" and ratio["reason"], name
        else:
            assert ratio["status"] == ("PASS" if ratio["value"] <= ratio["target"] else "FAIL"), name


def test_guard_calls_are_counted_per_guard_case(quick_run, committed):
    """--quick compiles nothing, so it counts nothing; a full run counts the guard's calls in each case,
    and the step's are the most, as the step holds the other cases."""
    assert quick_run["guard_calls_per_call"] == dict.fromkeys(guard_group.GUARD_CASES)
    calls = committed["guard_calls_per_call"]
    assert list(calls) == list(guard_group.GUARD_CASES)
    assert 0 < calls["loss"] < calls["loss_backward"] <= calls["train_step"]


def test_a_ratio_is_its_rows_divided(quick_run):
    data = quick_run
    add = data["timings_us"]["small"]["add"]
    expected = add["npy"]["us"] / (add["floor"]["us"] + add["numpy"]["us"])
    assert data["ratios"]["small_add_npy_vs_floor_plus_numpy"]["value"] == pytest.approx(expected, rel=1e-2)


def test_cpp_vs_python_times_builds_and_imports(quick_run):
    data = quick_run
    times = data["cpp_vs_python"]
    assert times["twin_build_seconds"]["cold"] is None  # too slow for --quick
    assert 0 < times["twin_build_seconds"]["cached"] == times["first_import_seconds"]["cpp_twin"]
    assert set(times["first_import_seconds"]) == {"cpp_twin", "minimal_python", "backend_pkg"}


def test_compiled_rows_hold_numbers(quick_run):
    """The installed package registers the "npy" compile backend, so the compiled MLP rows are timed."""
    data = quick_run
    assert "npy" in torch._dynamo.list_backends(exclude_tags=())
    for step in ("forward", "train_step"):
        row = data["timings_us"]["mlp"][step]["npy_compiled"]
        assert row["us"] is not None and row["unavailable"] is None, row


def test_committed_json_has_the_layout_the_script_writes(quick_run, committed):
    data = quick_run
    assert schema(committed) == schema(data), "source/benchmarks.json is stale: run `make bench`"


def test_committed_json_is_a_full_run(committed):
    assert committed["quick"] is False, "source/benchmarks.json holds --quick numbers: run `make bench`"


def test_quick_numbers_are_not_written_over_the_committed_json():
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert "--output" in result.stderr


def test_some_groups_are_not_written_over_the_committed_json():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--groups", "backends"], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 2
    assert "--output" in result.stderr


def test_the_object_model_prototypes_still_apply(tmp_path):
    """benchmarks/object_model.py builds each design by editing a copy of backend_pkg; an edit
    that no longer finds its text would stop the measurement the tensor-subclass page reads."""
    spec = importlib.util.spec_from_file_location("object_model", ROOT / "benchmarks" / "object_model.py")
    object_model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(object_model)
    for index, edits in enumerate(object_model.DESIGNS.values()):
        object_model.design_tree(edits, tmp_path / str(index))
    measured = json.loads(object_model.OUTPUT.read_text())
    assert list(measured["designs"]) == list(object_model.DESIGNS)


def test_a_group_run_alone_is_merged_in_place_of_its_rows(quick_run, committed):
    """``--merge``/``--merge-from``: one group's new rows, the others' kept, every ratio evaluated again."""
    group_run = {**quick_run, "timings_us": {"zoo": quick_run["timings_us"]["zoo"]}}
    merged = bench.merged(committed, group_run)
    assert merged["timings_us"]["zoo"] == quick_run["timings_us"]["zoo"]
    assert merged["timings_us"]["small"] == committed["timings_us"]["small"]
    assert list(merged["timings_us"]) == list(quick_run["timings_us"])
    kept = [note for note in committed.get("merged_groups", []) if note["group"] != "zoo"]
    assert merged["merged_groups"][:-1] == kept  # the other groups' notes, the zoo's own replaced
    assert merged["merged_groups"][-1]["group"] == "zoo"
    assert merged["merged_groups"][-1]["date"] == quick_run["date"]
    assert merged["ratios"].keys() == bench.RATIOS.keys()
    lenet = merged["timings_us"]["zoo"]["lenet"]
    expected = lenet["npy_eager"]["us"] / lenet["cpu_eager"]["us"]
    assert merged["ratios"]["zoo_lenet_eager_npy_vs_cpu"]["value"] == round(expected, 3)  # as the JSON keeps it


@pytest.mark.parametrize("run", ["quick_run", "committed"])
def test_zoo_steps_have_their_aten_ops_counted_at_every_width(run, request):
    """Every family at every width has its CPU step's aten ops counted (how a step's time becomes its
    time per op), and its width described; a wider model runs the same ops, each on more numbers."""
    data = request.getfixturevalue(run)
    ops, widths = data["zoo_aten_ops_per_step"], data["cases"]["zoo"]["widths"]
    cases = [*zoo_group.load_zoo().RECIPES, *wider_zoo_cases()]
    assert sorted(ops) == sorted(widths) == sorted(cases)
    assert all(list(counts) == ["npy", "cpu"] for counts in ops.values())
    assert all(isinstance(count, int) and count > 0 for counts in ops.values() for count in counts.values())
    for family, larger in zoo_group.ZOO_WIDTHS.items():
        assert widths[family] == {"family": family, "width": widths[family]["width"]}
        assert widths[family]["width"] < min(larger)
        for width in larger:
            assert widths[f"{family}_width{width}"] == {"family": family, "width": width}
            assert ops[f"{family}_width{width}"] == ops[family], (family, width)


def test_merging_the_zoo_brings_its_op_counts(quick_run, committed):
    without_zoo = {**quick_run, "timings_us": {"small": quick_run["timings_us"]["small"]}}
    assert bench.merged(committed, without_zoo)["zoo_aten_ops_per_step"] == committed["zoo_aten_ops_per_step"]
    counted = {**committed, "zoo_aten_ops_per_step": dict.fromkeys(committed["zoo_aten_ops_per_step"], {"cpu": 1})}
    with_zoo = {**quick_run, "timings_us": {"zoo": quick_run["timings_us"]["zoo"]}}
    assert bench.merged(counted, with_zoo)["zoo_aten_ops_per_step"] == quick_run["zoo_aten_ops_per_step"]


def test_the_grad_what_if_lets_dynamo_read_an_npy_parameters_grad():
    """The zoo's ``npy_inductor_grad_traced`` rows compile under ``dynamo_reads_subclass_grad``: within it,
    ``clip_grad_norm_(module.parameters())`` on npy is traced whole, as on CPU; without it, the frame gives up."""
    layer = torch.nn.Linear(4, 2).to("npy")
    layer(torch.ones(3, 4, device="npy")).sum().backward()

    def clip(module):
        return torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)

    def frames_and_breaks():
        counters.clear()
        torch._dynamo.reset()
        torch.compile(clip, backend="eager")(layer)
        return dict(counters["frames"]), sum(counters["graph_break"].values())

    frames, breaks = frames_and_breaks()
    assert frames.get("ok", 0) < frames["total"] and breaks > 0
    with zoo_group.dynamo_reads_subclass_grad():
        frames, breaks = frames_and_breaks()
    assert frames.get("ok", 0) == frames["total"] and breaks == 0
    assert "grad" in torch._dynamo.variables.torch_function.banned_attrs  # the patch ends with its context
