"""Random small fleets for comparing the solver with the oracle, one per seed (same seed, same
fleet, on every machine).

A fleet has one or two clusters of one to three small pools (whole-GPU, `mig: allowed` and
`mig: mixed` pools of H100, H200, A100 and L40S GPUs, topologies declared or from the board),
kubelet reservations and host shares near the nodes' limits, tiers of whole GPUs or one MIG
profile with gang match attributes, teams whose grants hold guarantees (some in one cluster
only, some split between namespaces by the team's file, in gangs), and device taints on
nodes and single GPUs that some teams tolerate. It is written in the grant layout.

Node names come from a second generator of the same seed, so the rest of a seed's fleet is
what it was before pools listed names: about a third of the pools list their nodes' names
(as GKE names them, `gke-<cluster>-<pool>-pool-<suffix>`, leaving `nodes` out), and about
half the taints on one node name it rather than give its index.

Last (so that the draws before stay those of the fleets before them), some grants override a
tier's guarantee in one cluster (`quotaOverrides`), and some pools run a GPU model the fleet
describes itself (`GpuModel`): a twin of a built-in one under another name, in its family.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass

from tests.fleets import HEADER

MODELS = {
    # model -> the MIG profiles the generator uses
    "H100-80GB": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.10gb+me"),
    "A100-80GB": ("1g.10gb", "2g.20gb", "3g.40gb"),
    "H200": ("1g.18gb", "3g.71gb"),
    "L40S": (),
    "A30": ("1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"),
    "B200": ("1g.23gb", "3g.90gb"),
    "A100-40GB": ("1g.5gb", "1g.10gb", "3g.20gb"),
}
MODEL_WEIGHTS = ("H100-80GB",) * 4 + ("A100-80GB", "H200", "H200", "L40S", "L40S", "A30", "B200")
MODEL_WEIGHTS += ("A100-40GB",)
FAMILIES = {
    "H100-80GB": "H100",
    "A100-80GB": "A100",
    "A100-40GB": "A100",
    "H200": "H200",
    "L40S": "L40S",
    "A30": "A30",
    "B200": "B200",
}
PER_GPU = {"1g.20gb": 4, "1g.10gb": 4, "1g": 7, "2g": 3, "3g": 2}
"""About how many instances of a profile one GPU holds (to keep most gangs placeable)."""
BOARD = {"H100-80GB": (4, 2), "H200": (4, 2), "B200": (4, 2), "A100-80GB": (2, 2)}
BOARD["A100-40GB"] = (2, 2)
"""GPUs per NUMA node and PCIe root of 8-GPU boards."""
SELECTORS = {
    # extra structured fields that still select the model ("80GB" H100s report 79.65 GiB)
    "H100-80GB": ("architectures: [Hopper]", "minMemory: 79Gi"),
    "H200": ("architectures: [Hopper]", "minMemory: 80Gi", "minMemory: 140Gi"),
    "B200": ("architectures: [Blackwell]", "minMemory: 140Gi"),
    "A100-80GB": ("architectures: [Ampere, Ada Lovelace]", "minMemory: 79Gi"),
    "A100-40GB": ("architectures: [Ampere]",),
    "A30": ("architectures: [Ampere]",),
    "L40S": ("architectures: [Ada Lovelace]",),
}
CEL = {
    # a CEL selector -> models one of whose devices it selects (MIG ones: in a MIG pool)
    'device.attributes["gpu.nvidia.com"].type == "gpu" && '
    'device.attributes["gpu.nvidia.com"].architecture == "Hopper"': ("H100-80GB", "H200"),
    'device.attributes["gpu.nvidia.com"].productName in ["NVIDIA L40S", "NVIDIA H200"]': (
        "L40S",
        "H200",
    ),
    'device.attributes["gpu.nvidia.com"].type == "mig" && '
    'device.attributes["gpu.nvidia.com"].profile in ["3g.40gb", "3g.71gb"]': ("MIG",),
}
EVERY_PROFILE = {"H200"}
"""Models whose every MIG profile the second selector takes: on a MIG pool of them, the
oracle would try some 45 layouts per GPU (and the solver gives up on `mig: mixed`: GF402)."""
NO_MEMORY = ("1g.23gb", "3g.90gb", "4g.24gb")
"""MIG profiles whose memory no source gives (the oracle does not judge minMemory on them)."""
WHOLE_ATTRIBUTES = (
    None,
    None,
    None,
    "resource.kubernetes.io/pcieRoot",
    "resource.kubernetes.io/pcieRoot",
    "resource.kubernetes.io/numaNode",
    "resource.kubernetes.io/numaNode",
    "gpu.nvidia.com/productName",
    "resource.kubernetes.io/pciBusID",
    "gpu.nvidia.com/uuid",
)
MIG_ATTRIBUTES = (
    None,
    None,
    "gpu.nvidia.com/parentUUID",
    "gpu.nvidia.com/parentUUID",
    "resource.kubernetes.io/pciBusID",
    "resource.kubernetes.io/pcieRoot",
    "gpu.nvidia.com/profile",
)
DRIVERS = ("0.5", "0.5", "0.5", "0.4", "25.12", "25.8")
ATTRIBUTE_RELEASES = {
    # the attributes the generator uses that not every driver release publishes
    "resource.kubernetes.io/numaNode": ("0.5",),
    "resource.kubernetes.io/pciBusID": ("25.12", "0.4", "0.5"),
}
TAINT_KEYS = ("example.com/ecc", "example.com/burn-in")
TAINT_VALUES = ("bad", "good")
TOLERATIONS = (
    "{{key: {key}}}",
    "{{key: {key}}}",
    "{{key: {key}, effect: NoSchedule}}",
    "{{key: {key}, operator: Equal, value: bad}}",
    "{{key: {key}, operator: Equal, value: good, effect: NoExecute}}",
)


@dataclass(frozen=True)
class _Pool:
    name: str
    model: str
    mig: str
    width: int
    numa: int
    pcie: int
    names: tuple[str, ...] = ()
    """The names of the pool's nodes, in index order."""

    def group(self, attribute: str | None, profile: str) -> int:
        """About how many devices of `profile` ("": whole GPUs) share a value of `attribute`."""
        if profile and (self.mig == "disabled" or profile not in MODELS[self.model]):
            return 0
        per_gpu = 1
        if profile:
            per_gpu = next((n for p, n in PER_GPU.items() if profile.startswith(p)), 1)
            per_gpu = 1 if profile.endswith("+me") or profile.startswith(("4g", "7g")) else per_gpu
        gpus = {
            None: self.width,
            "resource.kubernetes.io/pcieRoot": self.pcie,
            "resource.kubernetes.io/numaNode": self.numa,
            "gpu.nvidia.com/productName": self.width,
            "gpu.nvidia.com/profile": self.width,
            "gpu.nvidia.com/uuid": 0,
        }.get(attribute, 1)
        return per_gpu * gpus if gpus else 1


def fleet(seed: int) -> dict[str, str]:
    """The policy files of fleet `seed`: {relative path: YAML}."""
    rng = random.Random(seed)
    naming = random.Random(f"node names {seed}")
    clusters = ["c1", "c2"][: rng.choice([1, 1, 2])]
    driver = rng.choice(DRIVERS)
    files: dict[str, str] = {}
    pools: dict[str, list[_Pool]] = {}
    for cluster in clusters:
        text, pools[cluster] = _cluster(rng, naming, cluster, driver)
        files[f"clusters/{cluster}.yaml"] = text
    tiers = _tiers(rng, [p for c in clusters for p in pools[c]], driver)
    for name, spec in tiers.items():
        files[f"tiers/{name}.yaml"] = (
            HEADER + f"kind: GpuTier\nmetadata: {{name: {name}}}\nspec: {spec.spec}\n"
        )
    taints = _taints(rng, naming, clusters, pools, files)
    granted: dict[str, _Granted] = {}
    for index in range(rng.randint(1, 4)):
        grant, team, granted[f"t{index}"] = _team(rng, f"t{index}", clusters, pools, tiers, taints)
        files[f"grants/t{index}.yaml"] = grant
        if team:
            files[f"teams/t{index}.yaml"] = team
    for name, what in granted.items():
        if rng.random() < 0.3:
            files[f"grants/{name}.yaml"] += _override(rng, what)
    if rng.random() < 0.25:
        _twin(rng, pools, files)
    return files


@dataclass(frozen=True)
class _Granted:
    """What `_team` granted: the clusters, and per tier (name, guarantee, gang, whether the
    team's file splits it between namespaces, saying each share)."""

    clusters: list[str]
    tiers: list[tuple[str, int, int, bool]]


def _override(rng: random.Random, granted: _Granted) -> str:
    """A `quotaOverrides` entry for one granted tier in one granted cluster: another whole
    number of gangs, at least one (a guarantee of no gang its tier cannot place is GF403,
    which the oracle does not judge) and never below what the team's file splits of it;
    sometimes a limit."""
    cluster = rng.choice(granted.clusters)
    tier, count, gang, split = rng.choice(granted.tiers)
    guaranteed = count + gang * rng.randint(0, 1) if split else gang * rng.randint(1, 3)
    limit = f", limit: {guaranteed + rng.randint(0, 4)}" if rng.random() < 0.5 else ""
    return (
        f"  quotaOverrides: [{{cluster: {cluster}, tier: {tier}, "
        f"guaranteed: {guaranteed}{limit}}}]\n"
    )


TWINS = {
    # A built-in model as a fleet would describe it, from ../shared/reference/nvidia-gpus.md
    # (NVML's memory.total, the MIG profile tables: GI id, compute and memory slices,
    # placements, memory), under another name and product name, in the built-in's family.
    "H100-80GB": (
        "{family: H100, productName: NVIDIA H100 80GB HBM3 (fleet), architecture: Hopper,\n"
        '  cudaComputeCapability: "9.0", memoryMiB: 81559, pciDeviceId: "0x2330",\n'
        "  boards: [{name: hgx-8, gpus: 8, numaNode: 4, pcieRoot: 2}],\n"
        "  mig: {memorySlices: 8, computeSlices: 7, profiles: [\n"
        "    {name: 1g.10gb, giProfileId: 19, computeSlices: 1, memorySlices: 1,\n"
        "     starts: [0, 1, 2, 3, 4, 5, 6], memoryMiB: 9984},\n"
        "    {name: 1g.10gb+me, giProfileId: 20, computeSlices: 1, memorySlices: 1,\n"
        "     starts: [0, 1, 2, 3, 4, 5, 6], media: true, memoryMiB: 9984},\n"
        "    {name: 1g.20gb, giProfileId: 15, computeSlices: 1, memorySlices: 2,\n"
        "     starts: [0, 2, 4, 6], memoryMiB: 20096},\n"
        "    {name: 2g.20gb, giProfileId: 14, computeSlices: 2, memorySlices: 2,\n"
        "     starts: [0, 2, 4], memoryMiB: 20096},\n"
        "    {name: 3g.40gb, giProfileId: 9, computeSlices: 3, memorySlices: 4,\n"
        "     starts: [0, 4], memoryMiB: 40448},\n"
        "    {name: 4g.40gb, giProfileId: 5, computeSlices: 4, memorySlices: 4,\n"
        "     starts: [0], memoryMiB: 40448},\n"
        "    {name: 7g.80gb, giProfileId: 0, computeSlices: 7, memorySlices: 8,\n"
        "     starts: [0], memoryMiB: 81152}]}}\n"
    ),
    "A30": (
        "{family: A30, productName: NVIDIA A30 (fleet), architecture: Ampere,\n"
        '  cudaComputeCapability: "8.0", memoryMiB: 24576, pciDeviceId: "0x20B7",\n'
        "  mig: {memorySlices: 4, computeSlices: 4, profiles: [\n"
        "    {name: 1g.6gb, giProfileId: 14, computeSlices: 1, memorySlices: 1,\n"
        "     starts: [0, 1, 2, 3], memoryMiB: 5952},\n"
        "    {name: 1g.6gb+me, giProfileId: 21, computeSlices: 1, memorySlices: 1,\n"
        "     starts: [0, 1, 2, 3], media: true, memoryMiB: 5952},\n"
        "    {name: 2g.12gb, giProfileId: 5, computeSlices: 2, memorySlices: 2,\n"
        "     starts: [0, 2], memoryMiB: 11968},\n"
        "    {name: 2g.12gb+me, giProfileId: 6, computeSlices: 2, memorySlices: 2,\n"
        "     starts: [0, 2], media: true, memoryMiB: 11968},\n"
        "    {name: 4g.24gb, giProfileId: 0, computeSlices: 4, memorySlices: 4,\n"
        "     starts: [0], memoryMiB: 24192}]}}\n"
    ),
    "L40S": (
        "{family: L40S, productName: NVIDIA L40S (fleet), architecture: Ada Lovelace,\n"
        '  cudaComputeCapability: "8.9", memoryMiB: 46068, pciDeviceId: "0x26B9"}\n'
    ),
}


def _twin(rng: random.Random, pools: dict[str, list[_Pool]], files: dict[str, str]) -> None:
    """One pool of a model in TWINS runs the fleet's twin of it instead."""
    candidates = [(c, p) for c in sorted(pools) for p in pools[c] if p.model in TWINS]
    if not candidates:
        return
    cluster, pool = rng.choice(candidates)
    name = f"fleet-{pool.model.lower()}"
    files[f"catalog/{name}.yaml"] = (
        HEADER + f"kind: GpuModel\nmetadata: {{name: {name}}}\nspec: {TWINS[pool.model]}"
    )
    path = f"clusters/{cluster}.yaml"
    files[path] = "".join(
        line.replace(f"gpu: {pool.model},", f"gpu: {name},")
        if line.startswith(f"    - {{name: {pool.name},")
        else line
        for line in files[path].splitlines(keepends=True)
    )


def _node_names(naming: random.Random, cluster: str, pool: str, nodes: int) -> tuple[str, ...]:
    """GKE-like names with distinct random suffixes (None: the default pattern names them)."""
    suffixes = naming.sample([f"{a}{b}" for a in "abkqx" for b in "2479mz"], nodes)
    return tuple(f"gke-{cluster}-{pool}-pool-{suffix}" for suffix in suffixes)


def _cluster(
    rng: random.Random, naming: random.Random, name: str, driver: str
) -> tuple[str, list[_Pool]]:
    pools, lines = [], []
    for index in range(rng.randint(1, 3)):
        model = rng.choice(MODEL_WEIGHTS)
        mig = rng.choice(["disabled", "allowed", "mixed"]) if MODELS[model] else "disabled"
        width = rng.choice({"mixed": [2, 2, 2, 4], "allowed": [2, 4]}.get(mig, [2, 4, 8]))
        nodes = 1 if mig == "mixed" else rng.randint(1, 3)
        fields = [
            f"name: p{index}",
            f"nodes: {nodes}",
            f"gpu: {model}",
            f"gpusPerNode: {width}",
            f"hostMemory: {rng.choice(['400Gi', '600Gi', '800Gi', '2Ti'])}",
            f"cpu: {rng.choice([32, 48, 64])}",
            f"mig: {mig}",
        ]
        numa, pcie = BOARD.get(model, (0, 0)) if width == 8 else (0, 0)
        if not numa or rng.random() < 0.3:  # else the board's grouping (8-GPU HGX, DGX)
            numa = rng.choice([n for n in (1, 2, 4, 8) if width % n == 0])
            pcie = rng.choice([n for n in (1, 2, 4) if numa % n == 0])
            fields.append(f"topology: {{numaNode: {numa}, pcieRoot: {pcie}}}")
        names = tuple(f"{name}-p{index}-{i}" for i in range(nodes))
        if naming.random() < 0.35:
            names = _node_names(naming, name, f"p{index}", nodes)
            fields[1] = f"nodeNames: [{', '.join(names)}]"
        lines.append("    - {" + ", ".join(fields) + "}\n")
        pools.append(_Pool(f"p{index}", model, mig, width, numa, pcie, names))
    kubelet = ""
    if rng.random() < 0.6:
        parts = []
        if rng.random() < 0.7:
            parts.append(
                f"systemReserved: {{cpu: {rng.choice(['500m', '1', '2'])}, "
                f"memory: {rng.choice(['512Mi', '1Gi', '16Gi'])}}}"
            )
        if rng.random() < 0.5:
            parts.append(f"kubeReserved: {{cpu: {rng.choice(['1', '1500m'])}, memory: 8Gi}}")
        if rng.random() < 0.5:
            parts.append(f"evictionHardMemory: {rng.choice(['0', '1Gi', '100Mi', '500Mi'])}")
        kubelet = "  kubelet: {" + ", ".join(parts) + "}\n" if parts else ""
    text = (
        HEADER
        + f'kind: Cluster\nmetadata: {{name: {name}}}\nspec:\n  kubernetesVersion: "1.36"\n'
        + f'  driverVersion: "{driver}"\n'
        + "  apiServer: {featureGates: {DRADeviceTaintRules: true}, "
        + "runtimeConfig: {resource.k8s.io/v1beta2/devicetaintrules: true}}\n"
        + kubelet
        + "  nodePools:\n"
        + "".join(lines)
    )
    return text, pools


@dataclass(frozen=True)
class _Tier:
    spec: str
    models: tuple[str, ...]
    profile: str
    attribute: str | None

    def serves(self, pools: list[_Pool]) -> bool:
        """Whether the tier selects some device of these pools."""
        return self.largest_gang(pools) > 0

    def largest_gang(self, pools: list[_Pool]) -> int:
        """About the largest gang the tier can place on one of these pools."""
        return max(
            (p.group(self.attribute, self.profile) for p in pools if p.model in self.models),
            default=0,
        )


def _tiers(rng: random.Random, pools: list[_Pool], driver: str) -> dict[str, _Tier]:
    """name -> tier."""
    tiers: dict[str, _Tier] = {}
    models = sorted({p.model for p in pools})
    profiles = sorted({(p.model, x) for p in pools if p.mig != "disabled" for x in MODELS[p.model]})
    for index in range(rng.randint(1, 3)):
        fields = []
        cel = [
            expression
            for expression, uses in CEL.items()
            if any(p.model in uses or ("MIG" in uses and p.mig != "disabled") for p in pools)
            and (
                "type ==" in expression
                or not any(p.mig != "disabled" and p.model in EVERY_PROFILE for p in pools)
            )
        ]
        if profiles and rng.random() < 0.45:
            model, profile = rng.choice(profiles)
            fields.append(f"partition: {profile}")
            if rng.random() < 0.15 and profile not in NO_MEMORY:
                fields.append(f"select: {{minMemory: {rng.choice(['5Gi', '30Gi', '39Gi'])}}}")
            attribute = rng.choice(MIG_ATTRIBUTES)
            chosen = tuple(MODELS)
        elif cel and rng.random() < 0.1:
            expression = rng.choice(cel)
            fields.append(f"select: {{cel: '{expression}'}}")
            attribute = rng.choice(MIG_ATTRIBUTES if "mig" in expression else WHOLE_ATTRIBUTES)
            model, profile, chosen = "", "", tuple(MODELS)
        else:
            model, profile = rng.choice(models), ""
            picked = {model, *rng.sample(models, rng.randint(0, len(models)))}
            names = sorted({FAMILIES[m] if rng.random() < 0.5 else m for m in sorted(picked)})
            extra = f", {rng.choice(SELECTORS[model])}" if rng.random() < 0.15 else ""
            fields.append(f"select: {{models: [{', '.join(names)}]{extra}}}")
            attribute = rng.choice(WHOLE_ATTRIBUTES)
            chosen = tuple(m for m in MODELS if m in picked or FAMILIES[m] in names)
        if rng.random() < 0.5:
            fields.append(f"hostMemoryPerGpu: {rng.choice(['40Gi', '100Gi', '150Gi', '200Gi'])}")
        if rng.random() < 0.4:
            fields.append(f"cpuPerGpu: {rng.choice(['4', '8', '12', '15500m'])}")
        if attribute in ATTRIBUTE_RELEASES and driver not in ATTRIBUTE_RELEASES[attribute]:
            attribute = None if rng.random() < 0.9 else attribute  # mostly a published one
        if attribute:
            fields.append(f"gangMatchAttribute: {attribute}")
        tiers[f"tier{index}"] = _Tier("{" + ", ".join(fields) + "}", chosen, profile, attribute)
    return tiers


def _taints(
    rng: random.Random,
    naming: random.Random,
    clusters: list[str],
    pools: dict[str, list[_Pool]],
    files: dict[str, str],
) -> list[str]:
    keys = []
    for cluster in clusters:
        for index in range(rng.choice([0, 1, 1, 2])):
            key = rng.choice(TAINT_KEYS)
            pool = rng.choice(pools[cluster])
            fields = [f"cluster: {cluster}"]
            reach = rng.random()
            if reach > 0.1:  # else every pool of the cluster
                fields.append(f"pool: {pool.name}")
            if reach > 0.3:  # else every node of the pool
                by_name = naming.random() < 0.5
                if by_name and naming.random() < 0.5:  # the name says the pool
                    fields.remove(f"pool: {pool.name}")
                fields.append(f"node: {pool.names[0]}" if by_name else "node: 0")
            if reach > 0.5:  # else every GPU of the node
                fields.append(f"device: {rng.choice([0, 1])}")
            fields.append(f"key: {key}")
            if rng.random() < 0.3:
                fields.append(f"value: {rng.choice(TAINT_VALUES)}")
            fields.append(
                f"effect: {rng.choice(['NoSchedule', 'NoSchedule', 'NoExecute', 'None'])}"
            )
            files[f"taints/{cluster}-{index}.yaml"] = (
                HEADER
                + f"kind: DeviceTaint\nmetadata: {{name: {cluster}-taint{index}}}\n"
                + "spec: {"
                + ", ".join(fields)
                + "}\n"
            )
            keys.append(key)
    return keys


def _team(
    rng: random.Random,
    name: str,
    clusters: list[str],
    pools: dict[str, list[_Pool]],
    tiers: dict[str, _Tier],
    taints: list[str],
) -> tuple[str, str, _Granted]:
    chosen = rng.sample(sorted(tiers), rng.randint(1, min(2, len(tiers))))
    where = [c for c in clusters if all(tiers[t].serves(pools[c]) for t in chosen)] or clusters
    if len(where) > 1 and rng.random() < 0.4:
        where = [rng.choice(where)]
    narrowed = ""  # the team's file keeps one of the clusters its grant gives it
    if where == clusters and len(where) > 1 and rng.random() < 0.25:
        narrowed = f"  clusters: [{rng.choice(where)}]\n"
    split = rng.random() < 0.25
    namespaces = [name, f"{name}-b"] if split else [name]
    grant_quotas, uses, granted = [], [], []
    for tier in chosen:
        largest = max(tiers[tier].largest_gang(pools[c]) for c in where)
        sizes = [g for g in (1, 1, 2, 2, 4, 8) if g <= largest or rng.random() < 0.1]
        gang = rng.choice(sizes or [1])
        count = gang * rng.randint(1, 2)
        if split:
            other = gang * rng.randint(0, 1)
            grant_quotas.append(f"{{tier: {tier}, guaranteed: {count + other}}}")
            granted.append((tier, count + other, gang, True))
            uses.append(f"{{tier: {tier}, namespace: {name}, guaranteed: {count}, gang: {gang}}}")
            uses.append(f"{{tier: {tier}, namespace: {name}-b, guaranteed: {other}, gang: {gang}}}")
        else:
            grant_quotas.append(f"{{tier: {tier}, guaranteed: {count}}}")
            granted.append((tier, count, gang, False))
            if gang > 1:
                uses.append(f"{{tier: {tier}, gang: {gang}}}")
    tolerations = sorted(
        {rng.choice(TOLERATIONS).format(key=k) for k in taints if rng.random() < 0.5}
    )
    grant = (
        HEADER
        + f"kind: TeamGrant\nmetadata: {{name: {name}}}\nspec:\n"
        + f"  namespaces: [{', '.join(namespaces)}]\n"
        + (f"  clusters: [{', '.join(where)}]\n" if where != clusters else "")
        + f"  quotas: [{', '.join(grant_quotas)}]\n"
        + ("  tolerations: [" + ", ".join(tolerations) + "]\n" if tolerations else "")
    )
    team = ""
    if uses or narrowed:
        team = (
            HEADER
            + f"kind: Team\nmetadata: {{name: {name}}}\nspec:\n  quotas: [{', '.join(uses)}]\n"
            + narrowed
        )
    return grant, team, _Granted(where, granted)


if __name__ == "__main__":  # python -m tests.random_fleets SEED: print the fleet
    for path, text in fleet(int(sys.argv[1])).items():
        print(f"# {path}\n{text}")
