"""Regression tests for what the fuzz suite (tests/fuzz) found: each a policy a user could
write that once ended in an internal error."""

from __future__ import annotations

from collections.abc import Callable

from tests import fleets
from tests.conftest import PolicyWriter

Run = Callable[..., tuple[int, str, str]]


def test_kueue_quotas_count_tainted_devices_another_tier_of_the_group_tolerates(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    """Tier `any` selects every GPU, `hopper` the H100s; one H100 is tainted and only the
    hopper team tolerates it, so its guarantee of all eight H100s holds. Kueue's quotas for
    the group (offered by `any`) add up to the 12 devices someone can use; the self-check
    once compared them with the 11 that `any`'s own holders can use (GF001, exit 3)."""
    pools = (
        "\n    - {name: h100, nodes: 1, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}"
        "\n    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}\n"
    )
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=pools) + "  kueue: {enabled: true}\n",
            "taint.yaml": fleets.HEADER + "kind: DeviceTaint\nmetadata: {name: ecc}\n"
            "spec: {cluster: c1, pool: h100, node: 0, device: 0, key: example.com/ecc}\n",
            "any.yaml": fleets.tier("any", "{cpuPerGpu: 1}"),
            "hopper.yaml": fleets.tier("hopper", "{select: {models: [H100]}}"),
            "a.yaml": fleets.team("a", "[{tier: any, guaranteed: 2}]"),
            "b.yaml": fleets.team(
                "b", "[{tier: hopper, guaranteed: 8}]", "  tolerations: [{key: example.com/ecc}]\n"
            ),
        }
    )
    code, out, err = run_cli("check", "--policies", root)
    assert code == 0 and "GF001" not in err, err
    assert out.startswith("ok: 1 clusters"), out


def test_a_taint_naming_a_node_by_name_in_an_unknown_pool_is_gf214(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    """A taint names its node by name and a pool the cluster does not have. The node cannot
    be looked up in no pool, so the unknown pool is the error to report (GF214, exit 1); the
    taint once reached the target check with its node still a name (GF001, exit 3)."""
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(),
            "taint.yaml": fleets.HEADER + "kind: DeviceTaint\nmetadata: {name: ecc}\n"
            "spec: {cluster: c1, pool: gone, node: 'node-0', key: example.com/ecc}\n",
        }
    )
    code, _, err = run_cli("check", "--policies", root)
    assert code == 1, err
    assert "GF214" in err and "GF001" not in err, err
    assert "taint 'ecc' names pool 'gone'" in err, err
