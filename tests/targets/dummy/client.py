"""The dummy target's operations: a status that names the located endpoint; nothing else."""

from __future__ import annotations

from typing import ClassVar

from infra.targets.operations import Locator, Operation, Status, TargetClient
from tests.targets.dummy.entry import ENTRY


class DummyClient(TargetClient):
    target = ENTRY.name
    cannot: ClassVar[dict[Operation, str]] = {
        Operation.INVOKE: "a dummy serves nothing",
        Operation.METRICS: "a dummy has no figures",
        Operation.WAIT: "a dummy is ready at once",
    }

    def __init__(self, name: str) -> None:
        self.name = name

    def where(self) -> dict[str, str | None]:
        return {"endpoint": self.name}

    def status(self) -> Status:
        return Status(self.target, self.name, "Dreaming", True)


def from_locator(where: Locator) -> DummyClient:
    return DummyClient(where.need("endpoint", ENTRY.name, "--endpoint", "name the dummy"))
