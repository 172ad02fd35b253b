"""Every cloud name a stack derives from its ``name``, with the cloud's limit and pattern.

Pure data. ``check_name`` refuses, while the config is read, a ``name`` whose longest derived
name would not fit (or would not match its pattern), so a bad name never reaches the cloud. Where
Pulumi auto-names a resource (no explicit name argument), it appends ``-`` and 7 random hex
characters to the logical name: ``AUTONAME_SUFFIX`` counts them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from infra.clouds.aws.generated import name_bounds
from infra.config import qualify
from tdk.errors import ConfigError

#: Pulumi auto-naming: "<logical name>-" + 7 random hex characters
AUTONAME_SUFFIX = 8
_AUTONAME_SAMPLE = "-abc1234"


@dataclass(frozen=True)
class NameRule:
    """A cloud's rule for one kind of name: the most characters and the full-match pattern."""

    kind: str
    limit: int
    pattern: str

    def accepts(self, value: str) -> bool:
        return len(value) <= self.limit and re.fullmatch(self.pattern, value) is not None


IAM_ROLE = NameRule("IAM role name", 64, r"[\w+=,.@-]+")
#: SageMaker's and CloudWatch's limits come from botocore (infra/clouds/aws/generated.json)
SAGEMAKER = NameRule("SageMaker name", *name_bounds("sagemaker.EndpointName"))
CW_NAME = NameRule(
    "CloudWatch dashboard/alarm name", name_bounds("cloudwatch.AlarmName")[0], r"[A-Za-z0-9_-]+"
)
SNS_TOPIC = NameRule("SNS topic name", 256, r"[A-Za-z0-9_-]+")
APP_SCALING_POLICY = NameRule(
    "Application Auto Scaling policy name",
    name_bounds("application-autoscaling.PolicyName")[0],
    r"[^:/]+",
)
EKS_CLUSTER = NameRule("EKS cluster name", 100, r"[0-9A-Za-z][A-Za-z0-9_-]*")
EKS_NODEGROUP = NameRule("EKS node group name", 63, r"[0-9A-Za-z][A-Za-z0-9_-]*")
AMP_ALIAS = NameRule("AMP workspace alias", 100, r".+")
LOG_GROUP = NameRule("CloudWatch Logs group name", 512, r"[\w#./-]+")
BUDGET = NameRule("AWS Budgets budget name", 100, r"[^:\\]+")
_RFC1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"
GKE_CLUSTER = NameRule("GKE cluster name", 40, _RFC1035)
GKE_NODE_POOL = NameRule("GKE node pool name", 40, _RFC1035)
GCE = NameRule("Compute Engine resource name", 63, _RFC1035)
GCP_SERVICE_ACCOUNT = NameRule("GCP service account id", 30, r"[a-z][-a-z0-9]{4,28}[a-z0-9]")
K8S_SERVICE = NameRule(
    "Kubernetes Service name (DNS-1035 label)", 63, r"[a-z]([-a-z0-9]*[a-z0-9])?"
)
HELM_RELEASE = NameRule("Helm release name", 53, r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


#: the most characters of ``cut_name``: with Pulumi's suffix, 63 (SageMaker's limit)
CUT_LIMIT = 55


def cut_name(name: str, component: str) -> str:
    """``<name>-<component>`` cut to ``CUT_LIMIT`` characters, made unique by a hash when cut:
    the logical name of a per-component resource that Pulumi auto-names (``{base}``)."""
    full = f"{name}-{component}"
    if len(full) <= CUT_LIMIT:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:6]
    return f"{full[: CUT_LIMIT - 7].rstrip('-')}-{digest}"


#: the longest inference component name (botocore ``InferenceComponentName``): a template's
#: ``{component}`` is rendered with it, so a name that fits fits every component
LONGEST_COMPONENT = "c" * name_bounds("sagemaker.InferenceComponentName")[0]


@dataclass(frozen=True)
class DerivedName:
    """One name a target derives: ``template`` with ``{name}`` (and ``{component}`` for a
    name per inference component), its rule, and whether Pulumi auto-names it (the random
    suffix then counts against the limit)."""

    target: str
    template: str
    rule: NameRule
    autonamed: bool

    def render(self, name: str) -> str:
        """The name as the cloud sees it, at its longest (a sample suffix stands for Pulumi's
        random one, the longest component name for ``{component}``; ``{base}`` is
        ``cut_name(name, component)``)."""
        value = self.template.format(
            name=name, component=LONGEST_COMPONENT, base=cut_name(name, LONGEST_COMPONENT)
        )
        return value + (_AUTONAME_SAMPLE if self.autonamed else "")

    @property
    def max_name_length(self) -> int:
        if "{base}" in self.template:  # cut to fit whatever the name: only its suffix counts
            return self.rule.limit if self.rule.accepts(self.render("a" * CUT_LIMIT)) else 0
        return self.rule.limit - len(self.render(""))


def derived(target: str, rule: NameRule, autonamed: bool, *templates: str) -> list[DerivedName]:
    """The names ``target`` derives with ``templates`` under one cloud ``rule``."""
    return [DerivedName(target, t, rule, autonamed) for t in templates]


def max_name_length(names: Sequence[DerivedName]) -> int:
    """The longest ``name`` every one of a target's derived ``names`` still fits (a target that
    derives no cloud names from it: the 40 characters ``name`` itself allows)."""
    return min((d.max_name_length for d in names), default=40)


def check_name(target: str, name: str, names: Sequence[DerivedName]) -> None:
    """ConfigError naming the derived name that ``name`` breaks, its limit and the fix
    (``names``: every name the ``target`` derives, its deploy contract's ``derived_names``)."""
    longest = max_name_length(names)
    for derived in names:
        value = derived.render(name)
        if not derived.rule.accepts(value):
            raise ConfigError(
                f"{qualify('name')} is {name!r}, but the {target} target derives the "
                f"{derived.rule.kind} {derived.template!r} from it, which would be {value!r} "
                f"({len(value)} characters): {derived.rule.kind}s take at most "
                f"{derived.rule.limit} characters matching {derived.rule.pattern}",
                hint=f"use a name of at most {longest} characters starting with a letter, e.g. "
                f"`pulumi config set {qualify('name')} tdk-{target}`",
            )
