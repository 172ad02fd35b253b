"""Pure builders of the aks target (no Pulumi, no Azure SDK): where a release lives in Blob
Storage, how a pod copies it with its workload identity, KEDA's pod identity, the Azure
Monitor managed Prometheus objects (PodMonitor, rule group) and the budget's arguments.

Sources (read 2026-11-27):
- Workload identity: a pod is injected ``AZURE_CLIENT_ID``, ``AZURE_TENANT_ID`` and
  ``AZURE_FEDERATED_TOKEN_FILE`` when it carries the label ``azure.workload.identity/use:
  "true"`` and its ServiceAccount the annotation ``azure.workload.identity/client-id``
  (learn.microsoft.com/azure/aks/workload-identity-overview); the federated credential's subject
  is ``system:serviceaccount:<namespace>:<name>`` (azure-aks-docs keda-workload-identity.md).
- KEDA chart values ``podIdentity.azureWorkload.{enabled,clientId,tenantId}`` (kedacore/charts
  keda/values.yaml at 1444d00; the chart labels the operator's pods for the webhook) and the
  TriggerAuthentication provider ``azure-workload`` (keda.sh/docs/latest/authentication-
  providers/azure-ad-workload-identity/).
- Azure Monitor managed Prometheus reads ``azmonitoring.coreos.com/v1`` PodMonitor and
  ServiceMonitor objects (azure-aks-docs ai-toolchain-operator-monitoring.md,
  learn.microsoft.com/azure/azure-monitor/containers/prometheus-metrics-scrape-crd); its query
  endpoint takes an Entra token for ``https://prometheus.monitor.azure.com``.
- The model sync uses the Azure CLI (``az login --federated-token``; ``az storage blob list
  --prefix --num-results '*'`` then ``az storage blob download`` per blob, ``--auth-mode login``;
  learn.microsoft.com/cli/azure/storage/blob, read 2026-12-07): Triton's own
  ``as://`` reader needs an account key (triton-inference-server/server#3079), which the kit
  never hands to a pod.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.clouds.azure.identity import CLIENT_ID_ANNOTATION, USE_LABEL
from infra.config import ReleaseLocation
from infra.k8s.alerts import AlertRule
from infra.k8s.spec import WorkloadIdentity
from tdk.errors import ConfigError

#: KEDA's pod-identity provider for Azure Workload Identity
KEDA_PROVIDER = "azure-workload"
#: the Entra scope of an Azure Monitor workspace's Prometheus query API
PROMETHEUS_SCOPE = "https://prometheus.monitor.azure.com/.default"
PODMONITOR_API = "azmonitoring.coreos.com/v1"
#: the Service annotation for an internal Azure load balancer
INTERNAL_LB = {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}
LOAD_BALANCER_ANNOTATIONS: Mapping[str, Mapping[str, str]] = {"internal-lb": INTERNAL_LB}


@dataclass(frozen=True)
class BlobRelease:
    """A release in Azure Blob Storage: ``az://<account>/<container>/<prefix>`` (the URL form
    of ``tdk package --release``, ``packager/stores/azaccount.py``)."""

    account: str
    container: str
    prefix: str

    @property
    def endpoint(self) -> str:
        return f"https://{self.account}.blob.core.windows.net"

    def blob_url(self, relative: str) -> str:
        path = "/".join(p for p in (self.container, self.prefix, relative) if p)
        return f"{self.endpoint}/{path}"

    def name(self, relative: str) -> str:
        """A blob's name in the container (``<prefix>/<relative>``)."""
        return f"{self.prefix}/{relative}" if self.prefix else relative


def blob_release(release: ReleaseLocation) -> BlobRelease:
    """The account, container and prefix of an ``az://`` release (the container is the first
    path segment of ``ReleaseLocation.prefix``)."""
    container, _, prefix = release.prefix.partition("/")
    if not container:
        raise ConfigError(
            f"releaseUrl {release.url!r} names no container",
            hint="use az://<account>/<container>/<prefix>, as `tdk package --release` wrote it",
        )
    return BlobRelease(release.bucket, container, prefix)


def login_script() -> str:
    """``az login`` as the pod's workload identity (the token file the webhook projects)."""
    return (
        'az login --service-principal --username "$AZURE_CLIENT_ID" '
        '--tenant "$AZURE_TENANT_ID" --federated-token "$(cat "$AZURE_FEDERATED_TOKEN_FILE")" '
        "--allow-no-subscriptions --output none"
    )


def download_script(release: BlobRelease, relative: str, dest: str) -> str:
    """Copy every blob under ``<prefix>/<relative>/`` into ``dest`` (names relative to it).

    The listing names its prefix (``az storage blob list --prefix``): the reader's role
    condition allows List Blobs only under the release prefix (``arm.release_read_condition``),
    and ``az storage blob download-batch`` lists the whole container, prefix-less, whatever its
    ``--pattern`` (azure-cli ``command_modules/storage/util.py`` ``collect_blob_objects``, read
    2026-12-07), so it would be denied. Each listed blob is downloaded into a staging folder
    beside ``dest``, then moved (one filesystem: no copy)."""
    stage = f"{dest}/.download"
    source = release.name(relative)
    target = f"--account-name {shlex.quote(release.account)} "
    target += f"--container-name {shlex.quote(release.container)}"
    names = f"{stage}.names"
    return " && ".join(
        (
            f"mkdir -p {shlex.quote(stage)}",
            f"az storage blob list --auth-mode login --output tsv {target} "
            f"--prefix {shlex.quote(source + '/')} --num-results '*' --query '[].name' "
            f"> {shlex.quote(names)}",
            f"while IFS= read -r name; do "
            f'mkdir -p "$(dirname {shlex.quote(stage)}/"$name")" && '
            f"az storage blob download --auth-mode login --no-progress --output none {target} "
            f'--name "$name" --file {shlex.quote(stage)}/"$name" || exit 1; '
            f"done < {shlex.quote(names)}",
            f"cp -a {shlex.quote(stage + '/' + source)}/. {shlex.quote(dest)}/",
            f"rm -rf {shlex.quote(stage)} {shlex.quote(names)}",
        )
    )


def sync_command(release: BlobRelease, dest: str) -> tuple[str, ...]:
    """The init container's command: log in, then copy ``<release>/repository`` to ``dest``."""
    script = f"set -eu; {login_script()}; {download_script(release, 'repository', dest)}"
    return ("sh", "-c", script)


def workload_identity(client_id: Any) -> WorkloadIdentity:
    """Triton's pods run as the managed identity ``client_id`` through workload identity: the
    ServiceAccount names it and every pod carries the label the webhook injects tokens into."""
    return WorkloadIdentity(
        service_account={CLIENT_ID_ANNOTATION: client_id}, pod_labels={USE_LABEL: "true"}
    )


def keda_pod_identity(client_id: Any, tenant_id: Any) -> dict[str, Any]:
    """The KEDA chart's ``podIdentity`` values: its operator runs as ``client_id`` through
    workload identity (values may be Pulumi outputs)."""
    return {"azureWorkload": {"enabled": True, "clientId": client_id, "tenantId": tenant_id}}


def pod_monitor(
    name: str, namespace: str, selector: Mapping[str, str], ports: Sequence[str] = ("metrics",)
) -> dict[str, Any]:
    """An Azure Monitor managed Prometheus PodMonitor for the pods' metrics ``ports`` (Triton's,
    and the front's in ``mme`` mode); the ``job`` label is the workload's name (``jobLabel``),
    as the shared PromQL and alerts expect."""
    return {
        "apiVersion": PODMONITOR_API,
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "jobLabel": "app.kubernetes.io/instance",
            "selector": {"matchLabels": dict(selector)},
            "podMetricsEndpoints": [
                {"port": port, "path": "/metrics", "interval": "15s"} for port in ports
            ],
        },
    }


def rule_group_rules(rules: list[AlertRule], action_group_id: Any) -> list[dict[str, Any]]:
    """The shared alert rules as an Azure Monitor Prometheus rule group's ``rules``."""
    return [
        {
            "alert": rule.name,
            "expression": rule.query,
            "for_": f"PT{rule.for_seconds // 60}M",
            "severity": 1 if rule.severity == "critical" else 3,
            "annotations": {"description": rule.documentation},
            "labels": {"severity": rule.severity},
            "enabled": True,
            "actions": [{"action_group_id": action_group_id}],
            "resolve_configuration": {"auto_resolved": True, "time_to_resolve": "PT10M"},
        }
        for rule in rules
    ]
