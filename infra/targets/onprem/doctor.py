"""What ``tdk doctor`` reports for an onprem stack: KEDA's chart against the Kubernetes version
the stack states, its Triton image; with ``--online``, that version against the cluster's own
(``kubectl version -o json``: ``serverVersion.major``/``minor``, the apimachinery
``version.Info`` fields; not re-read against a live server here, so any other answer is
reported as a drift, never a traceback)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING

from infra.facts import kubernetes as kf
from infra.facts.findings import UNVERIFIED, Finding, image_findings
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.targets.onprem.config import OnpremConfig

API = "kubectl version"
#: seconds kubectl has to answer
DEADLINE_S = 20


def kubectl_argv(config: OnpremConfig) -> list[str]:
    """``kubectl version`` against the stack's kubeconfig and context."""
    argv = ["kubectl", "version", "-o", "json", f"--request-timeout={DEADLINE_S - 5}s"]
    if config.kubeconfig:
        argv += ["--kubeconfig", config.kubeconfig]
    if config.context:
        argv += ["--context", config.context]
    return argv


def run_kubectl(argv: list[str]) -> str:
    """kubectl's answer (stdout); a UsageError naming why it could not answer."""
    if shutil.which(argv[0]) is None:
        raise UsageError("kubectl is not on PATH", hint="install kubectl to check the cluster")
    try:
        done = subprocess.run(argv, capture_output=True, check=False, timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        raise UsageError(f"kubectl version did not answer within {DEADLINE_S} s",
                         hint="check the kubeconfig's server is reachable") from None  # fmt: skip
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(
            f"kubectl version failed: {said[-1][:300] if said else 'no message'}",
            hint="check onpremKubeconfig and onpremContext (kubectl config get-contexts)",
        )
    return done.stdout.decode("utf-8", "replace")


def version_drift(config: OnpremConfig, run: Callable[[list[str]], str] = run_kubectl) -> list[str]:
    """The stated ``onpremKubernetesVersion`` against the server's minor (a network call)."""
    try:
        server = json.loads(run(kubectl_argv(config)))["serverVersion"]
        minor = int(str(server["minor"]).rstrip("+"))
        major = str(server["major"])
    except (ValueError, KeyError, TypeError):
        return ["kubectl version -o json answered no serverVersion major/minor"]
    stated = kf.minor(config.kubernetes_version)
    if (major, minor) == ("1", stated):
        return []
    return [
        f"onpremKubernetesVersion says 1.{stated} but the cluster runs {major}.{minor}: "
        f"`pulumi config set onpremKubernetesVersion {major}.{minor}`"
    ]


def keda_finding(config: OnpremConfig) -> Finding:
    """KEDA's chart against the stated version (KEDA's compatibility table)."""
    row = kf.keda_pin(config.keda_version) or kf.keda_for(config.kubernetes_version)
    src = kf.KEDA_SOURCE
    tested = f"tested with Kubernetes 1.{row.low}-1.{row.high}"
    status, note = (
        UNVERIFIED,
        f"{tested}; the stack states {config.kubernetes_version} (the kit's table)",
    )
    if not row.supports(kf.minor(config.kubernetes_version)):
        status, note = "broken", f"{tested}, not the cluster's {config.kubernetes_version}"
    return Finding("keda chart", row.version, src.url, str(src.checked), status, note)


def findings(config: OnpremConfig, today: dt.date) -> list[Finding]:
    """KEDA's chart and the Triton image (the cluster's nodes, driver and device plugin are
    its owner's: only ``--online`` compares the stated version with the cluster)."""
    return [keda_finding(config), *image_findings(config.workload.image, today)]
