"""The validated, frozen config of a sagemaker-ic stack (no Pulumi, no cloud SDK)."""

from __future__ import annotations

from dataclasses import dataclass

from infra.config import StackConfig
from infra.targets.sagemaker_ic.sizing import IcInstance, Requirements
from infra.values.guardrails import Budget

#: the one production variant every component is placed on
VARIANT_NAME = "AllTraffic"


#: the stack key of the instance type every component runs on
INSTANCE_KEY = "sagemakerIcInstanceType"


@dataclass(frozen=True)
class ComponentSpec:
    """One model copy served by one inference component."""

    #: the model copy (Triton model name, archive ``mme/<copy>.tar.gz``)
    copy: str
    #: its inference component name (``names.component_name(copy)``)
    component: str
    size_bytes: int
    needs: Requirements
    min_copies: int
    max_copies: int
    initial_copies: int
    #: decoupled (no mme/ archive): served from repository/ in Triton's generate mode
    decoupled: bool = False

    @property
    def archive(self) -> str:
        return f"mme/{self.copy}.tar.gz"

    @property
    def scales_to_zero(self) -> bool:
        return self.min_copies == 0


@dataclass(frozen=True)
class IcScaling:
    """Instances (managed instance scaling) and per-copy target tracking."""

    initial_instances: int
    min_instances: int
    max_instances: int
    concurrent_requests_per_copy: int
    scale_in_cooldown: int
    scale_out_cooldown: int


@dataclass(frozen=True)
class Startup:
    """StartupParameters of every component (seconds, 60-3600 each)."""

    download_timeout: int
    health_check_timeout: int


@dataclass(frozen=True)
class Rolling:
    """RollingUpdatePolicy of component updates: percent of the copies per batch, bake time."""

    batch_percent: int
    wait_seconds: int


@dataclass(frozen=True)
class IcThresholds:
    """Per-component alarm thresholds (the rollback alarms of component updates)."""

    latency_slo_ms: int
    error_rate_percent: int


@dataclass(frozen=True)
class AwaitingRelease:
    """No component is declared yet: the release is not published. ``url`` is where it goes
    (None: the stack's own bucket, whose name is known once it exists); ``key`` the stack key
    that names it ("" when the stack creates it)."""

    url: str | None
    key: str


@dataclass(frozen=True)
class SageMakerIcConfig:
    """The validated config of a sagemaker-ic stack."""

    common: StackConfig
    region: str
    instance: IcInstance
    triton_version: str
    inference_ami_version: str
    #: Triton knobs of the SageMaker image (env), shared by every component's container
    environment: dict[str, str]
    components: tuple[ComponentSpec, ...]
    scaling: IcScaling
    startup: Startup
    rolling: Rolling
    thresholds: IcThresholds
    alarm_email: str | None
    created_release_prefix: str
    budget: Budget | None
    log_retention_days: int
    #: set until the stack names a published release: components wait for it
    awaiting: AwaitingRelease | None = None
