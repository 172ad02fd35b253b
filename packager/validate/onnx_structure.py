"""ONNX graph structure ONNX Runtime refuses at load: a cycle between nodes, and control flow
without its subgraphs (``If`` without ``then_branch`` and ``else_branch``, ``Loop`` and
``Scan`` without ``body``). Checked in every subgraph too.

Checked against onnxruntime 1.32.0 (the ``build`` extra, in this venv, 2026-12-07): a graph
whose nodes depend on each other in a loop is "the graph is not acyclic" (FAIL), an ``If``
missing a branch or with a branch that is no graph is INVALID_GRAPH ("Required attribute
'else_branch' is missing", "Mismatched attribute type"); nodes merely listed out of
topological order load (ORT sorts them), so that order is not a finding.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from packager.validate.findings import Sink

#: subgraph attributes each control-flow op of the default ONNX domain requires
CONTROL_FLOW = {"If": ("then_branch", "else_branch"), "Loop": ("body",), "Scan": ("body",)}
_GRAPH = 5  # onnx.AttributeProto.AttributeType.GRAPH
MAX_NESTING = 64  # subgraphs inside subgraphs: deeper is refused rather than followed


def check_structure(graph: Any, path: Path, sink: Sink) -> None:
    """TDK511 for malformed control flow, TDK512 for a cycle, in ``graph`` and its subgraphs."""
    for where, sub in _graphs(graph, "graph", 0):
        for index, node in enumerate(sub.node):
            problem = _control_flow_problem(node)
            if problem:
                sink.report(
                    "TDK511",
                    f"{where}.node[{index}]",
                    f"{node.op_type} node {node.name or index} in {path} {problem}; ONNX Runtime "
                    "refuses the model",
                    "re-export the model (torch.onnx.export or onnx.helper.make_node with "
                    "every branch as a graph)",
                )
        cycle = _cycle(sub)
        if cycle:
            sink.report(
                "TDK512",
                where,
                f"the nodes {', '.join(cycle[:5])} of {path} depend on each other in a cycle; "
                "ONNX Runtime refuses a graph that is not acyclic",
                "re-export the model; a graph's nodes must not feed their own inputs",
            )


def _graphs(graph: Any, where: str, depth: int) -> Iterator[tuple[str, Any]]:
    yield where, graph
    if depth >= MAX_NESTING:
        return
    for index, node in enumerate(graph.node):
        for attribute in node.attribute:
            if attribute.type == _GRAPH and attribute.HasField("g"):
                inner = f"{where}.node[{index}].{attribute.name}"
                yield from _graphs(attribute.g, inner, depth + 1)


def _control_flow_problem(node: Any) -> str | None:
    if node.domain not in ("", "ai.onnx") or node.op_type not in CONTROL_FLOW:
        return None
    attributes = {a.name: a for a in node.attribute}
    for name in CONTROL_FLOW[node.op_type]:
        found = attributes.get(name)
        if found is None:
            return f"has no {name!r} (a subgraph it requires)"
        if found.type != _GRAPH or not found.HasField("g"):
            return f"has {name!r} that is not a graph"
    return None


def _cycle(graph: Any) -> list[str]:
    """Names of the nodes left on a cycle (Kahn's algorithm), empty when the graph is acyclic."""
    producer: dict[str, int] = {}
    for index, node in enumerate(graph.node):
        for output in node.output:
            if output:
                producer[output] = index
    needs = [{producer[i] for i in node.input if i in producer} for node in graph.node]
    users: dict[int, list[int]] = {}
    for index, sources in enumerate(needs):
        for source in sources:
            users.setdefault(source, []).append(index)
    waiting = [len(sources) for sources in needs]
    ready = deque(i for i, count in enumerate(waiting) if count == 0)
    while ready:
        for user in users.get(ready.popleft(), []):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    node = graph.node
    return [node[i].name or f"#{i} ({node[i].op_type})" for i, c in enumerate(waiting) if c > 0]
