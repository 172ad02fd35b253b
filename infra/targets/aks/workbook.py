"""The aks dashboard: an Azure Monitor workbook charting the workload's PromQL figures from the
Azure Monitor workspace the stack already scrapes into (no Grafana instance to pay for).

Each chart is a workbook query item on the workspace's Prometheus data
(https://learn.microsoft.com/azure/azure-monitor/essentials/prometheus-workbooks, checked
2026-12-07): ``queryType`` 16 on a ``microsoft.monitor/accounts`` resource, its ``query`` the
``PrometheusQueryProvider/1.0`` JSON holding the PromQL, the form the portal's workbook editor
saves. The figures are ``promql.dashboard_figures``: the ones GKE's and EKS's dashboards chart,
SageMaker's six multi-model metrics with pending requests and evictions in ``mme`` mode.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from infra.k8s import promql

#: workbooks are named by a UUID (Microsoft.Insights/workbooks); derived from the stack's
#: workload name in this namespace, so a redeploy updates the same workbook
_NAMESPACE = uuid.UUID("6f6c1c53-2f0e-4b8e-9a59-7c1d3e0b7a21")
#: the workbook's time-range parameter each chart reads
TIME_RANGE = "TimeRange"
PROMETHEUS_QUERY_TYPE = 16
WORKSPACE_TYPE = "microsoft.monitor/accounts"


def workbook_name(workload: str) -> str:
    """The workbook's resource name: a UUID stable for ``workload``."""
    return str(uuid.uuid5(_NAMESPACE, workload))


def _time_range() -> dict[str, Any]:
    parameter = {
        "id": "time-range",
        "version": "KqlParameterItem/1.0",
        "name": TIME_RANGE,
        "type": 4,  # time range picker
        "isRequired": True,
        "value": {"durationMs": 3_600_000},
        "typeSettings": {"allowCustom": True},
    }
    return {
        "type": 9,  # parameters
        "name": "parameters",
        "content": {"version": "KqlParameterItem/1.0", "parameters": [parameter]},
    }


def _chart(index: int, title: str, query: str, workspace_id: str) -> dict[str, Any]:
    provider = {"version": "PrometheusQueryProvider/1.0", "queryText": query, "type": "query_range"}
    return {
        "type": 3,  # query
        "name": f"chart-{index}",
        "customWidth": "50",
        "content": {
            "version": "KqlItem/1.0",
            "title": title,
            "query": json.dumps(provider),
            "size": 0,
            "queryType": PROMETHEUS_QUERY_TYPE,
            "resourceType": WORKSPACE_TYPE,
            "crossComponentResources": [workspace_id],
            "timeContextFromParameter": TIME_RANGE,
            "visualization": "timechart",
        },
    }


def workbook_json(
    title: str, namespace: str, job: str, multi_model: bool, workspace_id: str
) -> str:
    """The workbook's ``serializedData``: a time range and one time chart per figure, each
    querying the workspace ``workspace_id`` (its ARM id)."""
    charted = promql.dashboard_figures(namespace, job, multi_model)
    header = {"type": 1, "name": "title", "content": {"json": f"## {title}"}}
    charts = [
        _chart(i, title, query, workspace_id) for i, (title, query) in enumerate(charted.items())
    ]
    return json.dumps({"version": "Notebook/1.0", "items": [header, _time_range(), *charts]})


def queries(serialized: str) -> dict[str, str]:
    """Each chart's title and PromQL in a workbook's ``serializedData`` (what the tests and
    ``promtool`` read back)."""
    items = json.loads(serialized)["items"]
    return {
        item["content"]["title"]: json.loads(item["content"]["query"])["queryText"]
        for item in items
        if item["type"] == 3
    }
