"""The validated, frozen config of an onprem stack and the onprem reading of its keys (no
Pulumi, no cloud SDK)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from infra.config import ConfigReader, ReleaseLocation, StackConfig, qualify
from infra.facts import hardware
from infra.facts import kubernetes as kf
from infra.k8s.alerts import rule_groups, workload_rules
from infra.k8s.config import WorkloadConfig, workload_spec
from infra.k8s.promql import dashboard_figures
from infra.k8s.spec import TritonServiceSpec, WorkloadIdentity
from infra.targets.onprem import builders as b
from tdk.errors import ConfigError

_VERSION = re.compile(r"^v?1\.[0-9]+(\.[0-9]+)?$")
#: a label's key (an optional DNS prefix and a name) and value, as Kubernetes allows them
_LABEL_KEY = re.compile(r"^([a-z0-9.-]{1,253}/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
#: a Secret's name: a DNS subdomain (RFC 1123)
_SECRET = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


@dataclass(frozen=True)
class OnpremConfig:
    """The validated config of an onprem stack."""

    common: StackConfig
    release: ReleaseLocation
    #: the kubeconfig file Pulumi and kubectl read (None: $KUBECONFIG or ~/.kube/config)
    kubeconfig: str | None
    #: its context (None: the current one)
    context: str | None
    #: the cluster's Kubernetes version, as the user states it (``kubectl version``)
    kubernetes_version: str
    keda_version: str
    gpu: hardware.Gpu
    gpus_per_node: int
    #: the Secret (in ``k8sNamespace``) the pods read the release with; None: the node's
    release_secret: str | None
    s3_endpoint: b.S3Endpoint | None
    s3_region: str
    prometheus_url: str
    #: the Service's annotations for ``k8sServiceExposure: internal-lb`` (the cluster's own
    #: load balancer: MetalLB's pool, a cloud controller's internal scheme)
    internal_lb_annotations: dict[str, str]
    #: declare the prometheus-operator PodMonitor and PrometheusRule
    prometheus_operator: bool
    #: their labels (what the cluster's Prometheus selects them by)
    prometheus_labels: dict[str, str]
    #: declare the Grafana dashboard ConfigMap
    grafana_dashboard: bool
    workload: WorkloadConfig


def read_release(common: StackConfig) -> ReleaseLocation:
    """``releaseUrl``: an existing release in a store the cluster reaches (the common reader
    already refused ``file://`` and other schemes, naming the key and the fix)."""
    release = common.release
    key = qualify("releaseUrl")
    if release is None:
        raise ConfigError(
            f"{key} is empty; the onprem target serves an existing release (Triton loads "
            "<releaseUrl>/repository at start) from a store the cluster reaches",
            hint="run `tdk package --release s3://<bucket>/<prefix>` (an S3-compatible store "
            f"such as MinIO works) and `pulumi config set {key} s3://<bucket>/<prefix>`",
        )
    if release.scheme == "az" and not release.prefix:
        raise ConfigError(
            f"{key} is {release.url!r}: an az:// release names its account and container "
            "(az://account/container/prefix)",
            hint=f"`pulumi config set {key} az://<account>/<container>/<prefix>`",
        )
    return release


def read_kubernetes_version(reader: ConfigReader) -> str:
    """``onpremKubernetesVersion``: the cluster's minor, stated (no cloud API tells it offline);
    KEDA's chart is picked for it, and ``mme`` mode checks Envoy Gateway's range."""
    key = qualify("onpremKubernetesVersion")
    value = reader.optional_string("onpremKubernetesVersion")
    hint = f"`pulumi config set {key} 1.33` (`kubectl version` prints the server's)"
    if value is None or not _VERSION.match(value):
        what = "empty" if value is None else f"{value!r}, not a Kubernetes version like 1.33"
        raise ConfigError(f"{key} is {what}: the cluster's version picks KEDA's chart", hint=hint)
    covered = [r for r in kf.KEDA_RELEASES if r.supports(kf.minor(value))]
    if not covered:
        low = min(r.low for r in kf.KEDA_RELEASES)
        high = max(r.high for r in kf.KEDA_RELEASES)
        raise ConfigError(
            f"{key} is {value}: no KEDA release in the kit's table supports it (1.{low} to "
            f"1.{high}; {kf.KEDA_SOURCE.url}, checked {kf.KEDA_SOURCE.checked})",
            hint="upgrade the cluster, or add KEDA's row to infra/facts/kubernetes.py",
        )
    return value


def read_gpu(reader: ConfigReader) -> hardware.Gpu:
    """``onpremGpu``: the GPU of the cluster's GPU nodes, one of the kit's GPU kinds."""
    key = qualify("onpremGpu")
    value = reader.string("onpremGpu")
    found = hardware.GPUS.get(value)
    if found is None:
        raise ConfigError(
            f"{key} is {value!r}, not a GPU kind tdk knows ({', '.join(hardware.GPUS)})",
            hint=f"`pulumi config set {key} T4` (`kubectl get nodes -L nvidia.com/gpu.product` "
            "shows the nodes' GPUs)",
        )
    return found


def read_secret(reader: ConfigReader, release: ReleaseLocation) -> str | None:
    """``onpremReleaseSecret``: the Secret the pods read the release with; an az:// release
    needs one (Triton reads Azure Storage with a shared key only, here)."""
    secret = reader.optional_string("onpremReleaseSecret")
    key = qualify("onpremReleaseSecret")
    keys = ", ".join(b.SECRET_KEYS[release.scheme])
    if secret is None and release.scheme == "az":
        raise ConfigError(
            f"{key} is empty but {qualify('releaseUrl')} is an az:// release: Triton reads "
            "Azure Storage with the account's key, from a Secret",
            hint=f"create a Secret with the key {keys} in the workload's namespace and "
            f"`pulumi config set {key} <secret>`",
        )
    if secret is not None and not _SECRET.match(secret):
        raise ConfigError(
            f"{key} is {secret!r}, not a Kubernetes Secret name",
            hint=f"`pulumi config set {key} tdk-release` (the Secret holds {keys})",
        )
    return secret


def read_prometheus_url(reader: ConfigReader) -> str:
    """``onpremPrometheusUrl``: the in-cluster Prometheus KEDA asks (http(s)://host[:port])."""
    key = qualify("onpremPrometheusUrl")
    value = reader.optional_string("onpremPrometheusUrl") or ""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{key} is {value!r}: KEDA scales Triton on PromQL and needs the URL of the "
            "cluster's Prometheus, which scrapes Triton (onpremPrometheusOperator)",
            hint=f"`pulumi config set {key} http://prometheus-operated.monitoring.svc:9090` "
            "(kube-prometheus-stack's Service)",
        )
    return value.rstrip("/")


def read_pairs(reader: ConfigReader, key: str, example: str) -> dict[str, str]:
    """``key``: ``name=value`` pairs, comma-separated (label or annotation names and values)."""
    qualified = qualify(key)
    pairs: dict[str, str] = {}
    raw = reader.optional_string(key) or ""
    for item in (part.strip() for part in raw.split(",") if part.strip()):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not _LABEL_KEY.match(name) or not _LABEL_VALUE.match(value):
            raise ConfigError(
                f"{qualified} holds {item!r}, not a name=value pair",
                hint=f"`pulumi config set {qualified} {example}`",
            )
        pairs[name] = value
    return pairs


def read_internal_lb(reader: ConfigReader) -> dict[str, str]:
    """``onpremInternalLbAnnotations``, required when the workload asks for an internal load
    balancer: only the cluster's owner knows what makes one internal there."""
    key = "onpremInternalLbAnnotations"
    annotations = read_pairs(reader, key, "metallb.io/address-pool=internal")
    if reader.string("k8sServiceExposure") == "internal-lb" and not annotations:
        raise ConfigError(
            f"{qualify('k8sServiceExposure')} is 'internal-lb' but {qualify(key)} is empty: "
            "what makes this cluster's load balancer internal is its own annotation",
            hint=f"`pulumi config set {qualify(key)} <annotation>=<value>` (MetalLB: the pool of "
            f"internal addresses), or `pulumi config set {qualify('k8sServiceExposure')} "
            "cluster-ip`",
        )
    return annotations


def triton_spec(config: OnpremConfig) -> TritonServiceSpec:
    """The Triton workload of an onprem stack: the release read with the stack's Secret, KEDA
    on the cluster's Prometheus, no cloud identity (the ServiceAccounts carry no binding)."""
    release = config.release
    return workload_spec(
        config.workload,
        name=config.common.name,
        load_balancers={"internal-lb": config.internal_lb_annotations},
        model_repository=b.triton_repository(release, config.s3_endpoint),
        release_url=release.url,
        prometheus=b.prometheus_source(config.prometheus_url),
        identity=WorkloadIdentity(),
        builder=WorkloadIdentity(),
        env=b.store_env(release, config.s3_endpoint, config.s3_region),
        pod_monitoring=False,  # the prometheus-operator PodMonitor is the target's own
        store_access=b.store_access(release, config.release_secret),
    )


def own_manifests(config: OnpremConfig) -> list[dict[str, Any]]:
    """The target's own objects beside the workload: the PodMonitor that has the cluster's
    Prometheus scrape Triton and the PrometheusRule of the shared alerts
    (``onpremPrometheusOperator``), the Grafana dashboard (``onpremGrafanaDashboard``)."""
    spec = triton_spec(config)
    labels, found = config.prometheus_labels, []
    if config.prometheus_operator:
        rules = workload_rules(spec.namespace, spec.name, config.workload.alerts)
        found += [
            b.pod_monitor(spec.name, spec.namespace, spec.selector, spec.metrics_ports, labels),
            b.prometheus_rule(spec.name, spec.namespace, labels, rule_groups(rules)),
        ]
    if config.grafana_dashboard:
        multi_model = config.workload.mme is not None
        figures = dashboard_figures(spec.namespace, spec.name, multi_model)
        found.append(b.grafana_dashboard(spec.name, spec.namespace, figures))
    return found
