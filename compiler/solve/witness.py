"""The placement witness of a solved plan: the devices of each node that serve each gang.

The model counts nodes per packing pattern and gangs per guarantee; this turns the counts into
one concrete placement, node by node: each node of a group in a configuration gets a pattern,
each gang slot of the pattern a guarantee that uses that item, and each gang concrete devices
within one group of its match attribute (compiler.solve.placement). The plan writes it so that
a checker can verify the plan device by device without trusting the model.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from compiler.ir import WHOLE_GPU, GangRuns, GroupKey, GuaranteeKey, NodeGangs, run_length
from compiler.solve.groups import NodeGroup
from compiler.solve.model import ClusterModel
from compiler.solve.node_options import NodeConfig
from compiler.solve.packing import Item, Pattern, node_layout, pattern_gangs
from compiler.solve.placement import placement
from compiler.solve.runner import Solution


@dataclass
class Need:
    """Gangs of one guarantee still to place on one item's slots."""

    key: GuaranteeKey
    gangs: int


def placements(
    built: ClusterModel, solution: Solution, labels: dict[str, dict[int, str]]
) -> dict[str, GangRuns]:
    """Pool -> the gangs of every node in index order, run-length encoded."""
    per_node: dict[str, dict[int, NodeGangs]] = {p.pool.name: {} for p in built.cluster.pools}
    chosen_in: dict[GroupKey, dict[str, list[tuple[int, int, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for (group_key, ci, pi), var in sorted(built.nodes.items()):
        if nodes := solution[var]:
            label = built.configs[group_key][ci].label
            chosen_in[group_key][label].append((ci, pi, nodes))
    queues_in: dict[GroupKey, dict[Item, list[Need]]] = defaultdict(lambda: defaultdict(list))
    for (key, group_key, device), item in sorted(built.items.items()):
        if gangs := solution[built.gangs[key, group_key, device]]:
            queues_in[group_key][item].append(Need(key, gangs))
    for group in built.groups:
        pool = group.pool.pool.name
        chosen, queues = chosen_in[group.key], queues_in[group.key]
        slots: dict[tuple[int, int], list[tuple[list[Need], tuple[str, ...]]]] = {}
        for index in group.nodes:
            runs = chosen[labels[pool][index]]
            ci, pi, left = runs[0]
            runs[0] = (ci, pi, left - 1)
            if left == 1:
                runs.pop(0)
            if (ci, pi) not in slots:
                config = built.configs[group.key][ci]
                slots[ci, pi] = [
                    (queues[item], devices)
                    for item, devices in _slots(group, config, built.patterns[group.key, ci][pi])
                    if item in queues
                ]
            per_node[pool][index] = _node_gangs(slots[ci, pi])
    return {
        pool: run_length([gangs[i] for i in sorted(gangs)])
        for pool, gangs in sorted(per_node.items())
    }


Slot = tuple[Item, tuple[str, ...]]
"""A gang slot of a pattern with the devices it takes on the node."""


def _slots(group: NodeGroup, config: NodeConfig, pattern: Pattern) -> list[Slot]:
    """The gang slots of one pattern on a node of `group` in `config`, with concrete devices."""
    layout = dict(node_layout(group, config))
    found: list[Slot] = []
    ordinal: Counter[tuple[int, str]] = Counter()
    for device in sorted(layout):
        items = pattern_gangs(pattern, device)
        spots = placement(layout[device], tuple(item.gang for item in items))
        if spots is None:  # patterns are built from placements: cannot happen
            raise ValueError(f"pattern of group {group.key} does not place on {config.label}")
        for item, gpus in zip(items, spots, strict=True):
            names = []
            for gpu in gpus:
                if device == WHOLE_GPU:
                    names.append(f"gpu-{gpu}")
                else:
                    names.append(f"gpu-{gpu}/{device}#{ordinal[gpu, device]}")
                    ordinal[gpu, device] += 1
            found.append((item, tuple(names)))
    return found


def _node_gangs(slots: list[tuple[list[Need], tuple[str, ...]]]) -> NodeGangs:
    """The gangs one node serves: each slot to the next guarantee that still needs its item."""
    found: list[tuple[GuaranteeKey, tuple[str, ...]]] = []
    for queue, devices in slots:
        if not queue:
            continue  # a slot no guarantee needs (any more)
        found.append((queue[0].key, devices))
        queue[0].gangs -= 1
        if not queue[0].gangs:
            queue.pop(0)
    return tuple(sorted(found))
