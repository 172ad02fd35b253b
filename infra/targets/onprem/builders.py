"""Pure builders of the onprem target: where Triton reads the release and with what (a Secret
the user made; no cloud identity), the Prometheus KEDA asks, the PodMonitor that has Triton
scraped. Plain data in, plain data out (no Pulumi).

Triton reads the release's ``repository/`` itself in ``all`` mode, from the three stores it
supports (the model repository guide, "Cloud Storage with Environment variables",
triton-inference-server/server docs/user_guide/model_repository.md, read 2026-12-07):

- ``s3://``: Amazon S3, or an S3-compatible store (MinIO, Ceph RGW) at ``onpremS3EndpointUrl``,
  which Triton takes as ``s3://host:port/bucket/path`` (HTTP) or ``s3://https://host:port/...``;
  credentials and region from ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
  ``AWS_DEFAULT_REGION``.
- ``gs://``: ``GOOGLE_APPLICATION_CREDENTIALS`` naming a credential JSON file.
- ``az://account/container/prefix``: Triton's ``as://account/container/path`` with
  ``AZURE_STORAGE_ACCOUNT`` and ``AZURE_STORAGE_KEY`` (shared key).

In ``mme`` mode the kit's front fetches archives with the packager's store clients: boto3
(the same ``AWS_*`` variables, ``TDK_S3_ENDPOINT_URL`` for the endpoint), google-cloud-storage
(``GOOGLE_APPLICATION_CREDENTIALS``), azure-storage-blob (``AZURE_STORAGE_CONNECTION_STRING``,
built from the key by the kubelet: ``infra.k8s.store_access``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from infra.config import ReleaseLocation, qualify
from infra.k8s.spec import PrometheusSource
from infra.k8s.store_access import SecretEnv, StoreAccess
from tdk.errors import ConfigError

#: the release stores Triton (``all``) and the front (``mme``) both read
RELEASE_SCHEMES: tuple[str, ...] = ("s3", "gs", "az")
#: where the Secret's keys are files in the pod (``gs://``: the credential JSON)
SECRET_MOUNT = "/var/run/tdk/release"
#: the key of the Secret holding a Google service account's credential JSON (``gs://``)
GCS_KEY_FILE = "key.json"
#: the Secret's keys per store (what ``docs/onprem.md`` tells the user to create)
SECRET_KEYS: Mapping[str, tuple[str, ...]] = {
    "s3": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN (optional)"),
    "gs": (GCS_KEY_FILE,),
    "az": ("AZURE_STORAGE_KEY",),
}
#: Azure's public cloud storage suffix (the connection string the front reads)
AZURE_ENDPOINT_SUFFIX = "core.windows.net"
#: KEDA's pod identity for a Prometheus that needs none (keda.sh TriggerAuthentication
#: ``podIdentity.provider`` enum: azure-workload, gcp, aws, aws-eks, none; the CRD of the
#: pinned chart, tests/infra/crd_schemas/keda.sh_triggerauthentication_v1alpha1.json)
KEDA_NO_IDENTITY = "none"
#: the prometheus-operator PodMonitor and PrometheusRule (monitoring.coreos.com/v1): their CRDs'
#: spec.jobLabel, spec.selector, spec.podMetricsEndpoints[].port/path/interval and
#: spec.groups[].name/rules[].alert/expr/for/labels/annotations (prometheus-operator
#: example/prometheus-operator-crd-full/monitoring.coreos.com_podmonitors.yaml and
#: _prometheusrules.yaml at 6adcebc, 2026-08-08; read 2026-12-07)
PODMONITOR_API = "monitoring.coreos.com/v1"


@dataclass(frozen=True)
class S3Endpoint:
    """An S3-compatible endpoint as Triton names it: host, port, and whether it is HTTPS."""

    url: str
    host: str
    port: int
    https: bool

    @property
    def triton_prefix(self) -> str:
        """``host:port`` or ``https://host:port``: what follows ``s3://`` in Triton's path."""
        return f"{'https://' if self.https else ''}{self.host}:{self.port}"


def s3_endpoint(value: str | None) -> S3Endpoint | None:
    """``onpremS3EndpointUrl`` (``http(s)://host[:port]``), None when empty (Amazon S3)."""
    if value is None:
        return None
    parts = urlsplit(value)
    key = qualify("onpremS3EndpointUrl")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise ConfigError(
            f"{key} is {value!r}, not an http(s)://host[:port] URL",
            hint=f"`pulumi config set {key} http://minio.minio.svc:9000` (empty: Amazon S3)",
        )
    if parts.path.strip("/") or parts.query or parts.username or parts.password:
        raise ConfigError(
            f"{key} is {value!r}: only scheme, host and port (the bucket is in releaseUrl, "
            "credentials in the Secret)",
            hint=f"`pulumi config set {key} {parts.scheme}://{parts.hostname}"
            f"{':' + str(parts.port) if parts.port else ''}`",
        )
    https = parts.scheme == "https"
    return S3Endpoint(value.rstrip("/"), parts.hostname, port or (443 if https else 80), https)


def triton_repository(release: ReleaseLocation, endpoint: S3Endpoint | None) -> str:
    """The release's ``repository/`` as Triton's ``--model-repository`` names it."""
    path = f"{release.bucket}/{release.key('repository')}"
    if release.scheme == "az":  # az://account/container/prefix -> as://account/container/...
        return f"as://{path}"
    if release.scheme == "s3" and endpoint is not None:
        return f"s3://{endpoint.triton_prefix}/{path}"
    return f"{release.scheme}://{path}"


def store_env(release: ReleaseLocation, endpoint: S3Endpoint | None, region: str) -> dict[str, str]:
    """What every container reading the store is told that is no secret: the S3 region and
    endpoint (the front reads ``TDK_S3_ENDPOINT_URL``), the Azure account."""
    if release.scheme == "s3":
        env = {"AWS_DEFAULT_REGION": region, "AWS_REGION": region}
        return env | ({"TDK_S3_ENDPOINT_URL": endpoint.url} if endpoint else {})
    if release.scheme == "az":
        return {"AZURE_STORAGE_ACCOUNT": release.bucket}
    return {}


def store_access(release: ReleaseLocation, secret: str | None) -> StoreAccess | None:
    """The Secret's keys as the store's clients read them (None: no Secret; Triton and the
    front then use what the node offers: an instance role, a public bucket)."""
    if secret is None:
        return None
    if release.scheme == "s3":
        return StoreAccess(
            secret,
            (
                SecretEnv("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"),
                SecretEnv("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"),
                SecretEnv("AWS_SESSION_TOKEN", "AWS_SESSION_TOKEN", optional=True),
            ),
        )
    if release.scheme == "gs":
        path = f"{SECRET_MOUNT}/{GCS_KEY_FILE}"
        return StoreAccess(
            secret, expanded=(("GOOGLE_APPLICATION_CREDENTIALS", path),), mount_path=SECRET_MOUNT
        )
    connection = (
        f"DefaultEndpointsProtocol=https;AccountName={release.bucket};"
        f"AccountKey=$(AZURE_STORAGE_KEY);EndpointSuffix={AZURE_ENDPOINT_SUFFIX}"
    )
    return StoreAccess(
        secret,
        (SecretEnv("AZURE_STORAGE_KEY", "AZURE_STORAGE_KEY"),),
        (("AZURE_STORAGE_CONNECTION_STRING", connection),),
    )


def prometheus_source(url: str) -> PrometheusSource:
    """KEDA queries the cluster's own Prometheus, which asks for no identity."""
    return PrometheusSource(url, KEDA_NO_IDENTITY)


def pod_monitor(
    name: str,
    namespace: str,
    selector: Mapping[str, str],
    ports: Sequence[str],
    labels: Mapping[str, str],
) -> dict[str, Any]:
    """A prometheus-operator PodMonitor for the pods' metrics ``ports`` (Triton's, and the
    front's in ``mme`` mode); ``job`` is the workload's name (``jobLabel``), as the shared
    PromQL and alerts expect; ``labels`` are what the cluster's Prometheus selects
    PodMonitors by (kube-prometheus-stack: its Helm release's ``release`` label)."""
    return {
        "apiVersion": PODMONITOR_API,
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "jobLabel": "app.kubernetes.io/instance",
            "selector": {"matchLabels": dict(selector)},
            "podMetricsEndpoints": [
                {"port": port, "path": "/metrics", "interval": "15s"} for port in ports
            ],
        },
    }


def prometheus_rule(
    name: str, namespace: str, labels: Mapping[str, str], groups: Mapping[str, Any]
) -> dict[str, Any]:
    """The shared alert rules (``alerts.rule_groups``) as a prometheus-operator PrometheusRule,
    which the cluster's Prometheus evaluates and its Alertmanager routes (its CRD's
    ``spec.groups[].rules[]``: alert, expr, for, labels, annotations; same source as
    :data:`PODMONITOR_API`)."""
    return {
        "apiVersion": PODMONITOR_API,
        "kind": "PrometheusRule",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"groups": list(groups["groups"])},
    }


#: the label the Grafana chart's dashboard sidecar loads ConfigMaps by (grafana/helm-charts
#: charts/grafana/README.md: ``sidecar.dashboards.label`` "grafana_dashboard", ``labelValue``
#: "" = any value; kube-prometheus-stack labels its own "1"; read 2026-12-07)
GRAFANA_DASHBOARD_LABEL = "grafana_dashboard"
#: one chart's size on Grafana's 24-column grid
_PANEL_WIDTH, _PANEL_HEIGHT = 12, 8


def grafana_dashboard(name: str, namespace: str, figures: Mapping[str, str]) -> dict[str, Any]:
    """A ConfigMap holding a Grafana dashboard of ``figures`` (title -> PromQL: the ones every
    cloud's dashboard charts), one time-series panel each on the default Prometheus source."""
    panels = [
        {
            "id": index + 1,
            "type": "timeseries",
            "title": title,
            "gridPos": {
                "x": (index % 2) * _PANEL_WIDTH,
                "y": (index // 2) * _PANEL_HEIGHT,
                "w": _PANEL_WIDTH,
                "h": _PANEL_HEIGHT,
            },
            "targets": [{"refId": "A", "expr": query}],
        }
        for index, (title, query) in enumerate(figures.items())
    ]
    # the Classic dashboard JSON model (grafana.com/docs/grafana/latest/dashboards/
    # build-dashboards/view-dashboard-json-model/, read 2026-12-07); a Grafana newer than the
    # schemaVersion migrates the dashboard when it loads it
    dashboard = {
        "uid": name[:40],
        "title": f"Triton {name}",
        "schemaVersion": 39,
        "time": {"from": "now-3h", "to": "now"},
        "refresh": "30s",
        "panels": panels,
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{name}-dashboard",
            "namespace": namespace,
            "labels": {GRAFANA_DASHBOARD_LABEL: "1"},
        },
        "data": {f"{name}.json": json.dumps(dashboard, sort_keys=True)},
    }
