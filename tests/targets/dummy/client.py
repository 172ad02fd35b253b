"""The dummy target's operations: a status that names the located endpoint; nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infra.targets.capabilities import Refused
from infra.targets.operations import Locator, Operation, Status, TargetClient, option


class DummyClient(TargetClient):
    cannot: ClassVar[dict[Operation, Refused]] = {
        Operation.INVOKE: Refused("a dummy serves nothing"),
        Operation.METRICS: Refused("a dummy has no figures"),
        Operation.WAIT: Refused("a dummy is ready at once"),
    }

    def __init__(self, target: str, name: str) -> None:
        self.target = target
        self.name = name

    def where(self) -> dict[str, str | None]:
        return {"endpoint": self.name}

    def status(self) -> Status:
        return Status(self.target, self.name, "Dreaming", True)


@dataclass(frozen=True, kw_only=True)
class DummyLocator(Locator):
    """A dummy by its ``--endpoint`` name."""

    endpoint: str | None = option()

    def client(self) -> DummyClient:
        return DummyClient(self.target, self.need("endpoint", "name the dummy"))


LOCATOR = DummyLocator
