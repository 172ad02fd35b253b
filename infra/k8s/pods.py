"""The Triton Deployment's pods as kubectl reports them: how many are Ready, and why the others
are not (CrashLoopBackOff with the container's last termination message, ImagePullBackOff,
Pending and unschedulable).

kubectl is the one channel the kit uses to talk to a cluster (``tdk build`` drives its Job the
same way), reached through its current context, run with a deadline. Its answer is decoded with
the bounded JSON reader and checked field by field: anything that is not a pod list is an error
naming kubectl, never a traceback. Field meanings: the Pod API (PodStatus, ContainerStatus,
ContainerStateWaiting/Terminated), https://kubernetes.io/docs/reference/kubernetes-api/
workload-resources/pod-v1/ and https://kubernetes.io/docs/concepts/workloads/pods/
pod-lifecycle/ (checked 2026-11-27).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tdk.bounded import DocumentError, parse_json
from tdk.errors import TdkError

#: seconds kubectl has to answer (its own --request-timeout is a little shorter)
KUBECTL_DEADLINE_S = 20.0
#: a pod list of a few replicas is kilobytes; more than this is not a pod list we asked for
MAX_ANSWER_BYTES = 8 * 1024 * 1024
#: waiting reasons that waiting does not cure: the container will not start as it is
#: (kubelet's CrashLoopBackOff after repeated exits; ImagePullBackOff after failed pulls)
STUCK = frozenset(
    {"CrashLoopBackOff", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError"}
)
#: waiting reasons worth reporting while a pod may still come up
SLOW = frozenset({"ErrImagePull", "CreateContainerError"})
HINT = (
    "check that kubectl's current context is the stack's cluster (kubectl config "
    "current-context) and that `kubectl get pods -o json` works"
)


class KubectlError(TdkError):
    """kubectl could not be asked, or its answer was not a pod list."""


@dataclass(frozen=True)
class PodProblem:
    """Why one pod does not serve: its name, the reason Kubernetes gives, and its message (the
    container's last termination message, or the scheduler's)."""

    pod: str
    reason: str
    message: str
    #: waiting will not make it serve (CrashLoopBackOff, ImagePullBackOff, ...)
    stuck: bool

    def as_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "reason": self.reason, "message": self.message}

    def __str__(self) -> str:
        return f"pod {self.pod}: {self.reason}" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class PodReadiness:
    """The pods a selector matches: Ready and NotReady counts and the problems found."""

    ready: int
    not_ready: int
    problems: tuple[PodProblem, ...]

    @property
    def stuck(self) -> tuple[PodProblem, ...]:
        return tuple(p for p in self.problems if p.stuck)

    def summary(self) -> str:
        return f"{self.ready} Ready, {self.not_ready} NotReady"

    def as_dict(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "not_ready": self.not_ready,
            "problems": [p.as_dict() for p in self.problems],
        }


def pods_argv(kubectl: str, namespace: str, selector: Mapping[str, str]) -> list[str]:
    labels = ",".join(f"{key}={value}" for key, value in sorted(selector.items()))
    request_timeout = int(KUBECTL_DEADLINE_S) - 5
    return [kubectl, "-n", namespace, "get", "pods", "-l", labels, "-o", "json",
            f"--request-timeout={request_timeout}s"]  # fmt: skip


def read_pods(namespace: str, selector: Mapping[str, str]) -> PodReadiness | str:
    """The pods ``selector`` matches in ``namespace``; a string saying why they could not be
    read when kubectl is absent or fails (the status then rests on Triton alone).
    KubectlError when kubectl answers something that is not a pod list."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return "not read: kubectl is not on PATH"
    argv = pods_argv(kubectl, namespace, selector)
    try:
        done = subprocess.run(argv, capture_output=True, check=False, timeout=KUBECTL_DEADLINE_S)
    except subprocess.TimeoutExpired:
        return f"not read: kubectl get pods did not answer within {KUBECTL_DEADLINE_S:.0f} s"
    except OSError as exc:
        return f"not read: kubectl could not run ({exc.strerror or exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"not read: kubectl get pods failed ({said[-1][:300] if said else 'no message'})"
    return parse_pods(done.stdout)


def parse_pods(answer: bytes) -> PodReadiness:
    """``kubectl get pods -o json``'s answer, checked; KubectlError naming kubectl if it is not
    a pod list."""
    if len(answer) > MAX_ANSWER_BYTES:
        raise KubectlError(f"kubectl get pods answered more than {MAX_ANSWER_BYTES} bytes", HINT)
    try:
        document = parse_json(answer, "kubectl get pods -o json", HINT)
    except DocumentError as exc:
        raise KubectlError(exc.message, exc.hint) from None
    items = _field(document, "items", list, "the answer")
    ready = not_ready = 0
    problems: list[PodProblem] = []
    for item in items:
        pod = _pod(item)
        if pod is None:
            continue  # terminating: on its way out
        is_ready, found = pod
        ready += is_ready
        not_ready += not is_ready
        problems += found
    return PodReadiness(ready, not_ready, tuple(problems))


def _pod(item: Any) -> tuple[bool, list[PodProblem]] | None:
    """Whether a pod is Ready, and what keeps it from serving; None for a terminating pod."""
    metadata = _field(item, "metadata", dict, "a pod")
    name = _field(metadata, "name", str, "a pod's metadata")
    if metadata.get("deletionTimestamp"):
        return None
    status = _field(item, "status", dict, f"pod {name}")
    conditions = _list(status, "conditions", f"pod {name}'s status")
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return ready, [] if ready else _problems(name, status, conditions)


def _problems(name: str, status: dict[str, Any], conditions: list[Any]) -> list[PodProblem]:
    found = []
    for container in _list(status, "containerStatuses", f"pod {name}'s status"):
        state = _field(container, "state", dict, f"pod {name}'s container status")
        waiting = state.get("waiting")
        if not isinstance(waiting, dict):
            continue
        reason = _text(waiting.get("reason"))
        if reason in STUCK or reason in SLOW:
            message = _last_termination(container) or _text(waiting.get("message"))
            found.append(PodProblem(name, reason, message, reason in STUCK))
    for condition in conditions:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            reason = _text(condition.get("reason")) or "Pending"
            found.append(PodProblem(name, reason, _text(condition.get("message")), False))
    if not found and status.get("phase") == "Pending":
        found.append(PodProblem(name, "Pending", _text(status.get("message")), False))
    return found


def _last_termination(container: dict[str, Any]) -> str:
    """The container's last termination: its message (Triton's last lines, written to
    /dev/termination-log or taken from the log tail), else its reason and exit code."""
    last = container.get("lastState")
    terminated = last.get("terminated") if isinstance(last, dict) else None
    if not isinstance(terminated, dict):
        return ""
    message = _text(terminated.get("message")).strip()
    if message:
        return message[-500:]
    code = terminated.get("exitCode")
    reason = _text(terminated.get("reason"))
    exit_code = f"exit code {code}" if isinstance(code, int) else ""
    return ", ".join(part for part in (reason, exit_code) if part)


def _field(value: Any, key: str, kind: type, what: str) -> Any:
    found = value.get(key) if isinstance(value, dict) else None
    if not isinstance(found, kind):
        raise KubectlError(
            f"kubectl get pods answered something that is not a pod list: {what} has no "
            f"{key!r} {kind.__name__}",
            HINT,
        )
    return found


def _list(value: dict[str, Any], key: str, what: str) -> list[dict[str, Any]]:
    """An optional list of objects (absent or null: empty)."""
    found = value.get(key)
    if found is None:
        return []
    if not isinstance(found, list) or not all(isinstance(x, dict) for x in found):
        raise KubectlError(
            f"kubectl get pods answered something that is not a pod list: {what} has a "
            f"{key!r} that is not a list of objects",
            HINT,
        )
    return found


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
