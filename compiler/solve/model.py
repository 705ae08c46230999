"""The CP-SAT feasibility model of one cluster.

Variables count devices, never individual GPUs: `gpus[pool,config]` is how many GPUs of a pool
run a configuration (whole, or one MIG layout enumerated from the catalog's placement rules),
and `use[guarantee,kind]` is how many devices of a kind serve a guarantee. One enforcement
literal per guarantee lets the explainer switch clauses off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from compiler.catalog import enumerate_layouts
from compiler.resolve import DeviceKind, Guarantee, ResolvedCluster
from compiler.solve.plan import WHOLE

SOLVER_SEED = 7


@dataclass
class ClusterModel:
    """A built CP-SAT model with handles to its variables."""

    cluster: ResolvedCluster
    model: cp_model.CpModel = field(default_factory=cp_model.CpModel)
    gpus: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    supply: dict[str, cp_model.LinearExprT] = field(default_factory=dict)
    use: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    enabled: dict[str, cp_model.IntVar] = field(default_factory=dict)
    served: dict[str, cp_model.LinearExprT] = field(default_factory=dict)
    kinds: dict[str, DeviceKind] = field(default_factory=dict)


def pool_configs(cluster: ResolvedCluster) -> dict[str, list[str]]:
    """Per pool, the configurations its GPUs may take: whole, plus MIG layouts if allowed."""
    configs: dict[str, list[str]] = {}
    for pool in cluster.pools:
        names = [WHOLE]
        if pool.pool.mig == "allowed":
            names.extend(layout.name for layout in enumerate_layouts(pool.model))
        configs[pool.pool.name] = names
    return configs


def build_model(cluster: ResolvedCluster, require_all: bool = True) -> ClusterModel:
    """Build the model; with require_all each enabled guarantee must be served in full."""
    built = ClusterModel(cluster)
    model = built.model
    for pool in cluster.pools:
        name = pool.pool.name
        layouts = {layout.name: layout for layout in enumerate_layouts(pool.model)}
        for config in pool_configs(cluster)[name]:
            built.gpus[name, config] = model.new_int_var(0, pool.gpus, f"gpus[{name},{config}]")
        model.add(sum(built.gpus[name, c] for c in pool_configs(cluster)[name]) == pool.gpus)
        for kind in pool.kinds:
            built.kinds[kind.key] = kind
            if kind.profile is None:
                built.supply[kind.key] = built.gpus[name, WHOLE]
            else:
                built.supply[kind.key] = sum(
                    layouts[c].count(kind.profile_name) * built.gpus[name, c]
                    for c in pool_configs(cluster)[name]
                    if c != WHOLE
                )
    for guarantee in cluster.guarantees:
        _add_guarantee(built, guarantee, require_all)
    for key in built.kinds:
        users = [v for (g, k), v in built.use.items() if k == key]
        if users:
            model.add(sum(users) <= built.supply[key])
    return built


def _add_guarantee(built: ClusterModel, guarantee: Guarantee, require_all: bool) -> None:
    tier = built.cluster.tier(guarantee.tier)
    key = guarantee.key
    literal = built.model.new_bool_var(f"enabled[{key}]")
    built.enabled[key] = literal
    parts = []
    for kind in tier.kinds:
        var = built.model.new_int_var(0, guarantee.count, f"use[{key},{kind.key}]")
        built.model.add(var == 0).only_enforce_if(~literal)
        built.use[key, kind.key] = var
        parts.append(var)
    built.served[key] = sum(parts) if parts else 0
    if require_all:
        built.model.add(built.served[key] == guarantee.count).only_enforce_if(literal)
    else:
        built.model.add(built.served[key] <= guarantee.count)


def new_solver(time_limit: float) -> cp_model.CpSolver:
    """A solver with fixed parameters so the same input always gives the same plan."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SOLVER_SEED
    solver.parameters.max_time_in_seconds = time_limit
    return solver
