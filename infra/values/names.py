"""Every cloud name a stack derives from its ``name``, with the cloud's limit and pattern.

Pure data. Each cloud's rules are its own (``infra/clouds/<cloud>/names.py``, a target's
``cloud_names.py``); here are the rule's shape, Kubernetes' and Helm's rules, and the check:
``check_name`` refuses, while the config is read, a ``name`` whose longest derived name would
not fit (or would not match its pattern), so a bad name never reaches the cloud. Where Pulumi
auto-names a resource (no explicit name argument), it appends ``-`` and 7 random hex
characters to the logical name: ``AUTONAME_SUFFIX`` counts them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class DerivedName:
    """One name a target derives: ``template`` with ``{name}`` (and ``{component}`` for a
    name per component, rendered as ``component``: the longest a component's name may be),
    its rule, and whether Pulumi auto-names it (the random suffix then counts against the
    limit)."""

    template: str
    rule: NameRule
    autonamed: bool
    component: str = ""

    def __post_init__(self) -> None:
        per_component = "{component}" in self.template or "{base}" in self.template
        if per_component and not self.component:
            raise TypeError(f"{self.template!r}: a name per component needs its longest name")

    def render(self, name: str) -> str:
        """The name as the cloud sees it, at its longest (a sample suffix stands for Pulumi's
        random one, the longest component name for ``{component}``; ``{base}`` is
        ``cut_name(name, component)``)."""
        part = self.component
        value = self.template.format(name=name, component=part, base=cut_name(name, part))
        return value + (_AUTONAME_SAMPLE if self.autonamed else "")

    @property
    def max_name_length(self) -> int:
        if "{base}" in self.template:  # cut to fit whatever the name: only its suffix counts
            return self.rule.limit if self.rule.accepts(self.render("a" * CUT_LIMIT)) else 0
        return self.rule.limit - len(self.render(""))


def derived(
    rule: NameRule, autonamed: bool, *templates: str, component: str = ""
) -> list[DerivedName]:
    """The names a target derives with ``templates`` under one cloud ``rule`` (``component``:
    the longest name a template's ``{component}`` stands for)."""
    return [DerivedName(t, rule, autonamed, component) for t in templates]


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
