"""Ways to GPUs around DRA, by behaviour: device-plugin resources (whole domains), the NVIDIA
container runtime's variables and GPU runtime classes are refused in team namespaces, except
where the team's grant allows that one way.

Expectations come from the policy source (the Fleet's lists, the grants' `allow`), never
from the emitter's tables. The allowing fleet is the example with three grants edited: each
of three teams may use one way, the fourth none, so every way is checked both allowed and
refused, and one allowance never opens another.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.ir import GrantedTeam
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.model.fleet import FleetSpec
from compiler.pipeline import Compiled, compile_policies
from compiler.resolve.grants import granted_teams
from tests.admission_harness import Cluster, Decision, Request
from tests.admission_requests import container, debug, pod
from tests.conftest import EXAMPLE

DRA_ONLY, ENVIRONMENT = "gpufleet-dra-only", "gpufleet-gpu-environment"
ALLOWED = {
    "gpu-ops": "devicePluginResources",
    "data-science": "gpuEnvironment",
    "llm-serving": "gpuRuntimeClasses",
}
"""In the allowing fleet: team -> the one way around DRA its grant allows (ml-research and
vision: none)."""
HARMLESS_ENV = {"CUDA_CACHE_PATH": "/tmp/cuda", "NVIDIA_TF32_OVERRIDE": "0", "HOME": "/home"}


@dataclass
class Fleet:
    """A policy tree, compiled, with its teams and Fleet settings read from the source."""

    compiled: Compiled
    teams: tuple[GrantedTeam, ...]
    spec: FleetSpec | None
    clusters: tuple[str, ...]
    _admission: dict[str, Cluster] = field(default_factory=dict)

    @classmethod
    def of(cls, root: Path) -> Fleet:
        policies = build_policies(load_policies(root))
        return cls(
            compile_policies(root),
            granted_teams(policies.grants, policies.teams, policies.fleet, []),
            policies.fleet.spec if policies.fleet else None,
            tuple(c.name for c in policies.clusters),
        )

    def setting(self, name: str) -> list[str]:
        """A list of the Fleet's (its default without a Fleet)."""
        value = getattr(self.spec, name) if self.spec else FleetSpec.model_fields[name].default
        return list(value)

    def admission(self, cluster: str) -> Cluster:
        """The cluster's policies and bindings, read once."""
        if cluster not in self._admission:
            self._admission[cluster] = Cluster.from_tree(self.compiled.tree, cluster)
        return self._admission[cluster]

    def namespaces(self) -> Iterator[tuple[str, GrantedTeam, str]]:
        """(cluster, team, namespace) of every team namespace."""
        for cluster in self.clusters:
            for team in self.teams:
                if team.spec.clusters is None or cluster in team.spec.clusters:
                    for namespace in team.spec.namespaces:
                        yield cluster, team, namespace


def allows(team: GrantedTeam, way: str) -> bool:
    """Whether the team's grant allows `way` (named as in the grant's YAML)."""
    fields = type(team.spec.allow).model_fields
    return any(getattr(team.spec.allow, n) for n, f in fields.items() if f.alias == way)


def plugin_samples(patterns: list[str]) -> list[str]:
    """Resource names each entry of `devicePluginResources` covers: for a whole domain, the
    classic GPU name, a MIG profile and a name nobody has used yet."""
    samples = []
    for pattern in patterns:
        domain, _, name = pattern.partition("/")
        names = ["gpu", "mig-1g.10gb", "anything-else"] if name == "*" else [name]
        samples += [f"{domain}/{n}" for n in names]
    return samples


def covered(resource: str, patterns: list[str]) -> bool:
    return any(
        resource == p or (p.endswith("/*") and resource.startswith(p[:-1])) for p in patterns
    )


def with_allowances(root: Path, allowances: dict[str, str]) -> Fleet:
    """The example below `root`, with exactly `allowances` (team -> the one way around DRA
    its grant allows) and no other."""
    shutil.copytree(EXAMPLE, root)
    for path in sorted((root / "grants").glob("*.yaml")):
        grant = yaml.safe_load(path.read_text(encoding="utf-8"))
        grant["spec"].pop("allow", None)
        if (way := allowances.get(grant["metadata"]["name"])) is not None:
            grant["spec"]["allow"] = {way: True}
        path.write_text(yaml.safe_dump(grant, sort_keys=False), encoding="utf-8")
    return Fleet.of(root)


@cache
def example() -> Fleet:
    """The example fleet with no grant allowing a way around DRA (gpu-ops's allowances
    removed): what every team meets unless its grant says otherwise."""
    with tempfile.TemporaryDirectory() as directory:
        return with_allowances(Path(directory) / "policies", {})


@pytest.fixture(scope="module")
def allowing(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """The example, with each team of ALLOWED granted its one way around DRA."""
    return with_allowances(tmp_path_factory.mktemp("allowing") / "policies", ALLOWED)


def denied(decision: Decision, policy: str, *fragments: str) -> None:
    assert decision.outcome == "denied", decision
    assert decision.policy == policy, decision
    for fragment in fragments:
        assert fragment in decision.message, (fragment, decision.message)


def admitted(cluster: Cluster, request: Request) -> None:
    decisions = cluster.decide(request)
    assert decisions, "no policy matched"
    assert all(d.outcome == "allowed" for d in decisions), decisions


def templates(fleet: Fleet, cluster: str, namespace: str) -> str:
    """The namespace's ResourceClaimTemplates as the messages list them."""
    prefix = f"clusters/{cluster}/{namespace}/resourceclaimtemplate_"
    names = [p[len(prefix) : -len(".yaml")] for p in fleet.compiled.tree if p.startswith(prefix)]
    return ", ".join(sorted(names)) or "(none in this namespace)"


EXAMPLE_NAMESPACES = list(example().namespaces())
parametrize_teams = pytest.mark.parametrize(
    ("cluster", "team", "namespace"),
    EXAMPLE_NAMESPACES,
    ids=[f"{c}-{ns}" for c, _, ns in EXAMPLE_NAMESPACES],
)


def _pod(team: GrantedTeam, namespace: str, **fields: Any) -> Request:
    return pod(namespace, priority=team.spec.priorities[0], **fields)


@parametrize_teams
def test_every_resource_of_a_listed_domain_is_refused(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    fleet = example()
    patterns = fleet.setting("device_plugin_resources")
    assert any(p.endswith("/*") for p in patterns), "the example refuses a whole domain"
    claim_instead = f"ResourceClaimTemplate: {templates(fleet, cluster, namespace)}"
    for resource in plugin_samples(patterns):
        one = {resource: "1"}
        in_limits = _pod(team, namespace, containers=[container(limits=one)])
        denied(
            fleet.admission(cluster).admit(in_limits),
            DRA_ONLY,
            f"Pod {namespace}/my-pod requests device-plugin resource {resource} in container "
            f"main: team {team.name} gets GPUs only through DRA",
            claim_instead,
        )
        in_init = _pod(
            team, namespace, init_containers=[container("setup", requests=one, limits=one)]
        )
        denied(
            fleet.admission(cluster).admit(in_init),
            DRA_ONLY,
            f"requests device-plugin resource {resource} in init container setup: ",
        )


@parametrize_teams
def test_other_extended_resources_pass(cluster: str, team: GrantedTeam, namespace: str) -> None:
    fleet = example()
    patterns = fleet.setting("device_plugin_resources")
    others = {"example.com/fpga": "1", "cpu": "4", "memory": "16Gi", "hugepages-2Mi": "1Gi"}
    assert not any(covered(r, patterns) for r in others)
    both = container(requests=others, limits=others)
    admitted(fleet.admission(cluster), _pod(team, namespace, containers=[both]))


def test_several_resources_and_containers_are_named() -> None:
    fleet = example()
    domain = next(p[:-1] for p in fleet.setting("device_plugin_resources") if p.endswith("/*"))
    gpu, mig = f"{domain}gpu", f"{domain}mig-1g.10gb"
    request = pod(
        "ml-research",
        [
            container("main", limits={gpu: "1", "cpu": "1"}, requests={mig: "1"}),
            container("sidecar", limits={gpu: "1"}),
        ],
        priority="training",
    )
    denied(
        fleet.admission("prod-east").admit(request),
        DRA_ONLY,
        f"requests device-plugin resource {gpu} and {mig} in container main and 1 more: ",
    )


def test_a_fleet_listing_only_the_classic_name_refuses_it_and_the_mig_names(
    tmp_path: Path,
) -> None:
    """`nvidia.com/gpu` by name covers no other name: the MIG resources of the cluster's
    partitionable GPUs are refused by name too, anything else of the domain passes."""
    root = tmp_path / "policies"
    shutil.copytree(EXAMPLE, root)
    documents = list(yaml.safe_load_all((root / "fleet.yaml").read_text(encoding="utf-8")))
    for document in documents:
        if document["kind"] == "Fleet":
            document["spec"]["devicePluginResources"] = ["nvidia.com/gpu"]
    (root / "fleet.yaml").write_text(yaml.safe_dump_all(documents), encoding="utf-8")
    fleet = Fleet.of(root)
    resolved = next(c for c in fleet.compiled.fleet.clusters if c.name == "prod-east")
    mig = sorted(
        f"nvidia.com/mig-{profile.name}"
        for pool in resolved.pools
        if pool.model.mig is not None and pool.pool.mig != "disabled"
        for profile in pool.model.mig.profiles
    )
    assert mig, "prod-east has GPUs MIG may partition"
    cluster = fleet.admission("prod-east")
    for resource in ["nvidia.com/gpu", *mig]:
        request = pod("ml-research", [container(limits={resource: "1"})], priority="training")
        denied(cluster.admit(request), DRA_ONLY, f"device-plugin resource {resource} in")
    other = pod("ml-research", [container(limits={"nvidia.com/other": "1"})], priority="training")
    admitted(cluster, other)


@parametrize_teams
def test_the_nvidia_runtime_variables_are_refused(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    fleet = example()
    names = fleet.setting("gpu_environment")
    assert "NVIDIA_VISIBLE_DEVICES" in names
    assert not set(HARMLESS_ENV) & set(names)
    harmless = container("sidecar", env=HARMLESS_ENV)
    admitted(fleet.admission(cluster), _pod(team, namespace, containers=[harmless]))
    for name in names:
        in_init = _pod(
            team,
            namespace,
            containers=[harmless],
            init_containers=[container("setup", env={**HARMLESS_ENV, name: "all"})],
        )
        denied(
            fleet.admission(cluster).admit(in_init),
            ENVIRONMENT,
            f"Pod {namespace}/my-pod sets {name} in init container setup, which the NVIDIA "
            f"container runtime reads to hand GPUs to a container: team {team.name} gets "
            "GPUs only through DRA",
            f"ResourceClaimTemplate: {templates(fleet, cluster, namespace)}",
        )
    both = container("main", env=dict.fromkeys(names, "all"))
    denied(
        fleet.admission(cluster).admit(_pod(team, namespace, containers=[harmless, both])),
        ENVIRONMENT,
        f"sets {' and '.join(sorted(names))} in container main, which",
    )


def test_an_ephemeral_container_is_judged_when_it_is_added() -> None:
    """`kubectl debug --env`: only the ephemeral containers an update adds are judged, and a
    plain update of the pod is not (its containers never change)."""
    fleet = example()
    cluster = fleet.admission("prod-east")
    created = pod("ml-research", priority="training")
    gpu_env = {fleet.setting("gpu_environment")[0]: "all"}
    debugger = container("debugger", env=gpu_env)
    denied(
        cluster.admit(debug(created, debugger)),
        ENVIRONMENT,
        f"sets {next(iter(gpu_env))} in ephemeral container debugger, which the NVIDIA",
    )
    harmless = container("debugger-2", env=HARMLESS_ENV)
    assert cluster.admit(debug(created, harmless, before=[debugger])).outcome == "allowed"
    offending = _pod_with(created, containers=[container(env=gpu_env)])
    update = Request(created.kind, "pods", "ml-research", offending, "UPDATE", offending)
    assert ENVIRONMENT not in [d.policy for d in cluster.decide(update)]


def _pod_with(request: Request, **spec: Any) -> dict[str, Any]:
    return {**request.object, "spec": {**request.object["spec"], **spec}}


@parametrize_teams
def test_gpu_runtime_classes_are_refused(cluster: str, team: GrantedTeam, namespace: str) -> None:
    fleet = example()
    for runtime in fleet.setting("gpu_runtime_classes"):
        denied(
            fleet.admission(cluster).admit(_pod(team, namespace, runtime_class=runtime)),
            DRA_ONLY,
            f"Pod {namespace}/my-pod uses runtime class {runtime}, which gives a pod every GPU",
            f"team {team.name} gets GPUs only through DRA",
        )
    admitted(fleet.admission(cluster), _pod(team, namespace, runtime_class="gvisor"))


def ways_around_dra(fleet: Fleet, team: GrantedTeam, namespace: str) -> dict[str, Request]:
    """One pod per way around DRA the fleet refuses, keyed by the allowance that permits it."""
    patterns = fleet.setting("device_plugin_resources")
    resource = plugin_samples(patterns)[0]
    variable = fleet.setting("gpu_environment")[0]
    runtime = fleet.setting("gpu_runtime_classes")[0]
    return {
        "devicePluginResources": _pod(
            team, namespace, containers=[container(limits={resource: "1"})]
        ),
        "gpuEnvironment": _pod(
            team, namespace, init_containers=[container("setup", env={variable: "all"})]
        ),
        "gpuRuntimeClasses": _pod(team, namespace, runtime_class=runtime),
    }


def test_a_grant_allows_exactly_the_ways_it_names(allowing: Fleet) -> None:
    checked = 0
    for cluster, team, namespace in allowing.namespaces():
        for way, request in ways_around_dra(allowing, team, namespace).items():
            if allows(team, way):
                admitted(allowing.admission(cluster), request)
            else:
                decision = allowing.admission(cluster).admit(request)
                assert decision.outcome == "denied", (team.name, way, decision)
                assert f"team {team.name} gets GPUs only through DRA" in decision.message
            checked += 1
    allowed_teams = {t.name for _, t, _ in allowing.namespaces() if t.name in ALLOWED}
    assert allowed_teams == set(ALLOWED), "every allowance is exercised"
    assert checked >= 3 * len(list(allowing.namespaces()))


def test_an_allowance_is_one_line_of_the_policy(allowing: Fleet) -> None:
    """What a grant allows is baked in one line per team: the PR that grants it shows those
    lines and nothing else of the policy."""
    in_cluster = {t.name for c, t, _ in allowing.namespaces() if c == "prod-east"}
    expected = sorted(f'"{t}": ["{way}"]' for t, way in ALLOWED.items() if t in in_cluster)
    assert len(expected) == len(ALLOWED)
    for name in (DRA_ONLY, ENVIRONMENT):
        path = f"clusters/prod-east/_cluster/validatingadmissionpolicy_{name}.yaml"
        before = example().compiled.tree[path].splitlines()
        after = allowing.compiled.tree[path].splitlines()
        assert [line.strip() for line in before if line not in after] == ["{}"]
        added = [line.strip().removesuffix(",") for line in after if line not in before]
        assert sorted(added) == expected
        assert len(after) == len(before) + len(expected) + 1  # the map's opening and closing


def test_a_name_a_tier_serves_through_dra_passes_inside_a_refused_domain(tmp_path: Path) -> None:
    """A tier that serves `nvidia.com/gpu` (extendedResourceName) takes over that one name:
    pods may request it (the scheduler allocates a tier device through DRA), the rest of
    the domain stays refused."""
    root = tmp_path / "policies"
    shutil.copytree(EXAMPLE, root)
    path = root / "tiers" / "training.yaml"
    tier = yaml.safe_load(path.read_text(encoding="utf-8"))
    tier["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    path.write_text(yaml.safe_dump(tier), encoding="utf-8")
    for cluster_file in (root / "clusters").glob("*.yaml"):  # the driver maps nothing (GF230)
        text = cluster_file.read_text(encoding="utf-8")
        text = text.replace("  nodePools:", "  driverExtendedResources: []\n  nodePools:", 1)
        cluster_file.write_text(text, encoding="utf-8")
    fleet = Fleet.of(root)
    served = {
        t.spec.extended_resource_name
        for t in build_policies(load_policies(root)).tiers
        if t.spec.extended_resource_name
    }
    assert served == {"nvidia.com/gpu"}
    patterns = fleet.setting("device_plugin_resources")
    refused = [r for r in plugin_samples(patterns) if r not in served]
    assert refused and all(covered(r, patterns) for r in [*served, *refused])
    cluster = fleet.admission("prod-east")
    for resource in served:
        request = pod("ml-research", [container(limits={resource: "1"})], priority="training")
        admitted(cluster, request)
    for resource in refused:
        request = pod("ml-research", [container(limits={resource: "1"})], priority="training")
        denied(cluster.admit(request), DRA_ONLY, f"device-plugin resource {resource} in")
