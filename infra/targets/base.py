"""The contract every deployment target keeps (SageMaker MME, GKE, EKS).

A target says what it is (``name``), where it can read releases from (``release_schemes``),
what it cannot do (``refusals``: data with a reason, checked while its config is read, before
any resource is declared), how to read its own config keys, and how to declare its resources.
"""

from __future__ import annotations

import abc
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from infra.config import ConfigReader, StackConfig, check_choice

ConfigT = TypeVar("ConfigT")


@dataclass(frozen=True)
class Refusal:
    """Something a target cannot do: the config key, the refused values, and why.

    ``value`` is a glob (``ml.inf2.*``); ``read_config`` must refuse every match, naming the
    reason, so what a target cannot do stays data that tests and docs can list.
    """

    key: str
    value: str
    reason: str


class Target(abc.ABC, Generic[ConfigT]):
    """One deployment target: its frozen config type and the resources it declares."""

    #: the value of ``triton-deploy-kit:target`` that selects this target
    name: ClassVar[str]
    #: URL schemes of the release stores this target's runtime can read (``s3``, ``gs``)
    release_schemes: ClassVar[tuple[str, ...]]

    def refusals(self) -> Iterable[Refusal]:
        """Values this target refuses outright, each with its reason (none by default)."""
        return ()

    def check(self, key: str, value: str, choices: Iterable[str]) -> str:
        """``value`` unless refused or not among ``choices``; the error says why and lists them."""
        for refusal in self.refusals():
            if refusal.key == key and fnmatch.fnmatchcase(value, refusal.value):
                return check_choice(key, value, choices, why=refusal.reason)
        return check_choice(key, value, choices)

    @abc.abstractmethod
    def read_config(self, reader: ConfigReader, common: StackConfig) -> ConfigT:
        """Read and validate this target's keys into its frozen config (ConfigError if bad)."""

    @abc.abstractmethod
    def declare(self, config: ConfigT) -> Mapping[str, Any]:
        """Declare the stack's resources; return the stack outputs (name -> value or Output)."""
