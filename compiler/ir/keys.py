"""The keys that name a guarantee, a device kind and a node group: typed, never parsed.

Each key is a small frozen value with its parts as fields; `str()` is the one place that writes
it as text (in the plan file, variable names and messages), and a key sorts as its text does,
so plans and explanations list them in the order they always had. Only reading a plan file
back (ir.plan) turns text into a key again, with `parse`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, total_ordering

WHOLE_GPU = "gpu"
"""The device name of a whole GPU, beside MIG profile names (`3g.40gb`)."""
_MIG_PREFIX = "mig-"


@total_ordering
class _TextOrdered:
    """Compares by its text, so a sorted list of keys is in the order the plan file has."""

    def __lt__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._text < other._text

    @cached_property
    def _text(self) -> str:
        # a key's text is asked for hundreds of thousands of times in sorts: written once
        return self.text()

    def __str__(self) -> str:
        return self._text

    def text(self) -> str:
        """The key as the plan file writes it."""
        raise NotImplementedError


@dataclass(frozen=True, eq=True)
class GuaranteeKey(_TextOrdered):
    """One guarantee: a team's quota of a tier in one namespace
    (`ml-research/ml-research/training`)."""

    team: str
    namespace: str
    tier: str

    def text(self) -> str:
        return f"{self.team}/{self.namespace}/{self.tier}"

    @staticmethod
    def parse(text: str) -> GuaranteeKey:
        """The key a plan file writes as `text` (ValueError when it is not one)."""
        team, namespace, tier = text.split("/")
        return GuaranteeKey(team, namespace, tier)


@dataclass(frozen=True, eq=True)
class DeviceKey(_TextOrdered):
    """The devices of one kind in one pool: whole GPUs (`h100/gpu`) or one MIG profile
    (`h100/mig-3g.40gb`)."""

    pool: str
    device: str
    """`gpu` (WHOLE_GPU) or a MIG profile name."""

    def text(self) -> str:
        kind = WHOLE_GPU if self.device == WHOLE_GPU else _MIG_PREFIX + self.device
        return f"{self.pool}/{kind}"

    @staticmethod
    def parse(text: str) -> DeviceKey:
        """The key a plan file writes as `text` (ValueError when it is not one)."""
        pool, kind = text.split("/")
        if kind == WHOLE_GPU:
            return DeviceKey(pool, WHOLE_GPU)
        if not kind.startswith(_MIG_PREFIX):
            raise ValueError(f"not a device kind: {text!r}")
        return DeviceKey(pool, kind.removeprefix(_MIG_PREFIX))


@dataclass(frozen=True, eq=True)
class GroupKey(_TextOrdered):
    """Nodes of one pool with the same taints: the first group is named after the pool, the
    others `pool#n`; `pool+` is the nodes a fix would add to the pool."""

    pool: str
    number: int = 0
    added: bool = False

    def text(self) -> str:
        if self.added:
            return f"{self.pool}+"
        return self.pool if self.number == 0 else f"{self.pool}#{self.number}"
