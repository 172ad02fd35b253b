"""``tdk plan`` is arithmetic: every figure below is computed by hand in the comments.

The measured unit (a bench record) sustains 300 rps within a 50 ms SLO (the 380 rps level
misses it); at the default safety factor 0.5 each unit is planned at 150 rps.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

PRICES = {
    "date": "2026-01-02",
    "sagemaker": {
        "us-east-1": {
            "ml.g4dn.xlarge": {"usd_per_hour": "0.7364", "source": "t"},
            "ml.g5.xlarge": {"usd_per_hour": "1.408", "source": "t"},
        }
    },
    "ec2": {
        "us-east-1": {
            "g5.xlarge": {"usd_per_hour": "1.006", "gpus": 1, "source": "t"},
            "inf2.xlarge": {"usd_per_hour": "0.7582", "gpus": 1, "source": "t"},
        }
    },
    "gce_machine": {"us-central1": {"g2-standard-8": {"usd_per_hour": "0.2936", "source": "t"}}},
    "gce_gpu": {"us-central1": {"nvidia-l4": {"usd_per_hour": "0.56", "source": "t"}}},
}


def _level(concurrency: int, rps: float, p99: float) -> dict[str, Any]:
    return {
        "mode": "concurrency",
        "level": concurrency,
        "throughput_rps": rps,
        "p50_ms": p99 / 2,
        "p90_ms": p99 * 0.8,
        "p99_ms": p99,
        "errors": {},
    }


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    bench = {
        "target": "sagemaker",
        "instance_type": "ml.g4dn.xlarge",
        "gpu": None,
        "target_model": "bert-0.tar.gz",
        "levels": [_level(1, 100, 20), _level(4, 300, 45), _level(8, 380, 120)],
    }
    paths = {
        "bench": tmp_path / "bench.json",
        "prices": tmp_path / "prices.json",
        "traffic": tmp_path / "traffic.csv",
    }
    paths["bench"].write_text(json.dumps(bench))
    paths["prices"].write_text(json.dumps(PRICES))
    paths["traffic"].write_text("time,rps\n00:00,90\n06:00,450\n12:00,1000\n18:00,301\n")
    return paths


def _plan(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", *args, "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    return document


def test_sagemaker_with_traffic_file_and_baseline(files: dict[str, Path]) -> None:
    document = _plan(
        str(files["bench"]),
        "--latency-budget-ms", "50",
        "--instance-type", "ml.g4dn.xlarge",
        "--traffic", str(files["traffic"]),
        "--baseline", "inf2.xlarge:2756rps:0.76",
        "--prices", str(files["prices"]),
    )  # fmt: skip
    assert document["price_date"] == "2026-01-02"
    assert document["measured_unit_rps"] == "300"
    assert document["average_rps"] == "460.25"  # (90 + 450 + 1000 + 301) / 4
    sagemaker, baseline = document["options"]
    # units per row: ceil(90/150)=1, ceil(450/150)=3, ceil(1000/150)=7, ceil(301/150)=3
    assert sagemaker == {
        "name": "ml.g4dn.xlarge",
        "baseline": False,
        "unit_rps": "300",
        "unit_rps_measured": True,  # measured on that instance type
        "units_per_instance": 1,
        "usd_per_hour_each": "0.7364",
        "peak_units": 7,
        "trough_units": 1,
        "peak_instances": 7,
        "trough_instances": 1,
        "peak_usd_per_hour": "5.15",  # 7 * 0.7364 = 5.1548
        "average_usd_per_hour": "2.58",  # (1 + 3 + 7 + 3) * 0.7364 / 4 = 2.5774
        "usd_per_million": "1.5556",  # 2.5774 / (460.25 * 3600) * 1e6 = 1.55555...
    }
    # baseline: 2756 rps at 0.5 -> 1378 per instance: one instance in every row
    assert baseline["name"] == "inf2.xlarge (baseline)"
    assert (baseline["peak_instances"], baseline["trough_instances"]) == (1, 1)
    assert baseline["peak_usd_per_hour"] == baseline["average_usd_per_hour"] == "0.76"
    assert baseline["usd_per_million"] == "0.4587"  # 0.76 / 1656900 * 1e6 = 0.45869...


def test_eks_peak_only_trough_is_one_node(files: dict[str, Path]) -> None:
    document = _plan(
        str(files["bench"]),
        "--latency-budget-ms", "50",
        "--target", "eks",
        "--instance-type", "g5.xlarge",
        "--peak-rps", "1000",
        "--baseline", "inf2.xlarge:2756rps",  # price from the table: 0.7582
        "--prices", str(files["prices"]),
    )  # fmt: skip
    eks, baseline = document["options"]
    assert eks["unit_rps_measured"] is False  # measured on ml.g4dn.xlarge, assumed here
    # peak: ceil(1000/150) = 7 pods on 7 one-GPU nodes; trough (no traffic): the 1-pod floor
    assert (eks["peak_units"], eks["trough_units"]) == (7, 1)
    assert (eks["peak_instances"], eks["trough_instances"]) == (7, 1)
    assert eks["peak_usd_per_hour"] == eks["average_usd_per_hour"] == "7.04"  # 7 * 1.006
    assert eks["usd_per_million"] == "1.9561"  # 7.042 / 3.6 = 1.95611...
    assert baseline["usd_per_hour_each"] == "0.7582"
    assert baseline["usd_per_million"] == "0.2106"  # 0.7582 / 3.6 = 0.21061...


def test_gke_node_is_machine_plus_gpus(files: dict[str, Path]) -> None:
    document = _plan(
        str(files["bench"]),
        "--latency-budget-ms", "50",
        "--target", "gke",
        "--region", "us-central1",
        "--instance-type", "g2-standard-8+nvidia-l4:200",  # 200 rps per pod: 100 planned
        "--gpus-per-node", "2",
        "--peak-rps", "1000",
        "--prices", str(files["prices"]),
    )  # fmt: skip
    (gke,) = document["options"]
    assert gke["usd_per_hour_each"] == "1.4136"  # 0.2936 + 2 * 0.56
    # ceil(1000/100) = 10 pods, two per node -> 5 nodes; trough 1 pod -> 1 node
    assert (gke["peak_units"], gke["peak_instances"]) == (10, 5)
    assert (gke["trough_units"], gke["trough_instances"]) == (1, 1)
    assert gke["peak_usd_per_hour"] == "7.07"  # 5 * 1.4136 = 7.068
    assert gke["usd_per_million"] == "1.9633"  # 7.068 / 3.6 = 1.96333...


def _stack(tmp_path: Path, name: str) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    return Path(shutil.copy(ROOT / name, tmp_path / name))


def test_write_stack_sagemaker_keeps_comments_and_order(
    files: dict[str, Path], tmp_path: Path
) -> None:
    stack = _stack(tmp_path, "Pulumi.sagemaker-dev.yaml")
    before = stack.read_text().splitlines()
    result = runner.invoke(
        app,
        [
            "plan", str(files["bench"]), "--latency-budget-ms", "50",
            "--traffic", str(files["traffic"]), "--prices", str(files["prices"]),
            "--write-stack", str(stack),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    after = stack.read_text().splitlines()
    key = "triton-deploy-kit:"
    # 300 rps * 0.5 * 60 = 9000 per minute; min = trough instances, max = peak instances
    assert f"  {key}sagemakerInvocationsPerInstance: 9000" in after
    assert f"  {key}sagemakerMinInstances: 1" in after
    assert f"  {key}sagemakerMaxInstances: 7" in after
    assert f"-  {key}sagemakerMaxInstances: 2" in result.output  # the diff is printed
    untouched = [line for line in before if "sagemakerMaxInstances" not in line]
    assert [line for line in after if line in untouched] == untouched  # comments, order kept
    assert len(after) == len(before) + 1  # one key appended


@pytest.mark.parametrize(
    ("stack_name", "keys"),
    [
        ("Pulumi.eks-dev.yaml", ("eksGpuNodesMin", "eksGpuNodesMax")),
        ("Pulumi.gke-dev.yaml", ("gkeGpuNodesMin", "gkeGpuNodesMax")),
    ],
)
def test_write_stack_k8s_sets_nodes_and_keda_replicas(
    files: dict[str, Path], tmp_path: Path, stack_name: str, keys: tuple[str, str]
) -> None:
    stack = _stack(tmp_path, stack_name)
    rate = "g5.xlarge:300" if "eks" in stack_name else "g2-standard-8+nvidia-l4:300"
    base = [str(files["bench"]), "--latency-budget-ms", "50", "--prices", str(files["prices"])]
    result = runner.invoke(
        app,
        ["plan", *base, "--peak-rps", "1000", "--instance-type", rate, "--write-stack", str(stack)],
    )
    assert result.exit_code == 0, result.output
    text = stack.read_text()
    # ceil(1000/150) = 7 pods on 7 one-GPU nodes at peak; 1 and 1 at the trough
    for key, value in [(keys[0], 1), (keys[1], 7), ("k8sMinReplicas", 1), ("k8sMaxReplicas", 7)]:
        assert f"  triton-deploy-kit:{key}: {value}\n" in text
    assert text.startswith("# Triton on ")  # the header comment survives


def test_bad_inputs_name_the_fix_and_write_nothing(files: dict[str, Path], tmp_path: Path) -> None:
    stack = _stack(tmp_path, "Pulumi.sagemaker-dev.yaml")
    original = stack.read_text()
    files["traffic"].write_text("00:00,90\n06:00,lots\n")
    cases = [
        (["--traffic", str(files["traffic"])], "traffic.csv:2: rps 'lots' is not a number"),
        (["--peak-rps", "10", "--latency-budget-ms", "10"], "no measured level has p99 <= 10 ms"),
        (["--peak-rps", "10", "--baseline", "inf2.xlarge"], "expected TYPE:RPSrps"),
        # checked before priced: an instance type SageMaker does not have is refused, unpriced
        (["--peak-rps", "10", "--instance-type", "ml.p9.huge"], "cannot deploy it"),
    ]
    for extra, message in cases:
        args = [
            str(files["bench"]),
            "--latency-budget-ms",
            "50",
            *extra,
            "--write-stack",
            str(stack),
        ]
        result = runner.invoke(app, ["plan", *args, "--prices", str(files["prices"])])
        assert result.exit_code == 2, result.output
        assert message in result.output
    assert stack.read_text() == original


def test_each_target_commits_dated_and_sourced_prices() -> None:
    """Every target that plans prices its default candidates, in its default region, from a
    table its own catalog commits (its folder's or its cloud's), dated, each row sourced."""
    from decimal import Decimal

    from infra.planning.pricing import Quote
    from infra.targets import registry
    from infra.targets.capabilities import Refused

    priced = []
    for entry in registry.entries():
        port = entry.plan
        table = None if isinstance(port, Refused) else port.prices()
        if isinstance(port, Refused) or table is None:
            continue
        assert dt.date.fromisoformat(table.date) <= dt.date(2026, 11, 27), entry.name
        assert Path(table.origin).is_relative_to(ROOT / "infra"), table.origin
        for section in table.sections.values():
            assert all(p.source for rows in section.values() for p in rows.values())
        for spec in port.default_candidates:
            quote = Quote(spec, Decimal(1), True, port.default_region, table)
            assert port.candidate(quote).usd_per_hour > 0, (entry.name, spec)
        priced.append(entry.name)
    assert len(priced) >= 4, priced  # every target that plans in the registry


def test_a_baseline_is_priced_from_the_section_that_lists_it() -> None:
    """The baseline's price came from SageMaker's section for ``ml.*`` and EC2's for anything
    else (a GCE machine was "no ec2 price"); now from whichever section lists the name."""
    from decimal import Decimal

    from infra.perf.plan.candidates import baseline
    from infra.planning.pricing import Price, PriceTable
    from infra.targets import catalogs
    from tdk.errors import UsageError

    table = catalogs.prices()
    gce = table.lookup("gce_machine", "us-central1", "g2-standard-4").usd_per_hour
    assert baseline("g2-standard-4:100rps", "us-central1", table).usd_per_hour == gce
    sagemaker = table.lookup("sagemaker", "us-east-1", "ml.g5.xlarge").usd_per_hour
    assert baseline("ml.g5.xlarge:100rps", "us-east-1", table).usd_per_hour == sagemaker
    ec2 = table.lookup("ec2", "us-east-1", "inf2.xlarge").usd_per_hour
    assert baseline("inf2.xlarge:100rps", "us-east-1", table).usd_per_hour == ec2
    with pytest.raises(UsageError, match=r"no single price for .box\.huge."):
        baseline("box.huge:100rps", "us-east-1", table)
    price = Price(Decimal(1), 1, "https://example.com")
    twice = PriceTable("2026-11-27", "t.json", {s: {"r": {"x": price}} for s in ("a", "b")})
    with pytest.raises(UsageError, match="in a, b alike"):
        twice.find("r", "x")


def test_plan_checks_every_candidate_before_pricing_it(files: dict[str, Path]) -> None:
    """``tdk plan`` priced candidates it never checked: an Inferentia instance (the ec2 table
    prices it) came out as an eks option although the eks target refuses it. Each candidate
    now goes through the one feasibility path first (issue 39 item 3)."""
    args = ["plan", str(files["bench"]), "--target", "eks", "--peak-rps", "10"]
    args += ["--latency-budget-ms", "50"]
    refused = runner.invoke(app, [*args, "--instance-type", "inf2.xlarge"])
    assert refused.exit_code == 2, refused.output
    assert "--instance-type inf2.xlarge: the eks target cannot deploy it" in refused.output
    assert "Inferentia" in refused.output
    priced = runner.invoke(app, [*args, "--instance-type", "g5.xlarge", "--json"])
    assert priced.exit_code == 0, priced.output


def test_a_bad_rate_hint_shows_the_unit_given_not_another_clouds() -> None:
    """The hint named a SageMaker type whatever the target (shared code names no cloud)."""
    from decimal import Decimal

    from infra.perf.plan.candidates import candidate
    from infra.targets import catalogs, registry
    from tdk.errors import UsageError

    port = registry.plan_port(registry.get("gke"))
    spec = "g2-standard-8+nvidia-l4"
    with pytest.raises(UsageError) as info:
        candidate(port, f"{spec}:fast", "us-central1", catalogs.prices(), Decimal(1), None)
    assert f"--instance-type {spec}:420" in (info.value.hint or "")
    assert "ml." not in (info.value.hint or "")


@pytest.mark.timeout(120)  # it hung forever, reading a FIFO no one writes (issue 47 item 7)
def test_a_traffic_fifo_is_refused_not_waited_on(files: dict[str, Path], tmp_path: Path) -> None:
    fifo = tmp_path / "traffic-fifo.csv"
    os.mkfifo(fifo)
    args = [str(files["bench"]), "--latency-budget-ms", "50", "--traffic", str(fifo)]
    result = runner.invoke(app, ["plan", *args, "--prices", str(files["prices"])])
    assert result.exit_code == 2, result.output
    assert "a FIFO (named pipe), not a file" in result.output and "--traffic" in result.output
    assert "Traceback" not in result.output
