"""The cluster objects a Kueue manager needs, taken from its own release and re-routed to loopback.

``kubectl kustomize <module>/config/default`` renders exactly what Kueue's kustomize install
creates. Of that, kube-local applies the Namespace, every CRD, the manager's ServiceAccount and
the Roles/ClusterRoles bound to it (with those bindings), the webhook-certificate Secret and both
webhook configurations, and nothing else (no Deployment, Services, APIServices, user-facing
aggregated roles). The one change: each webhook's and each CRD conversion webhook's
``clientConfig.service`` (a Service nothing routes to here) becomes
``url: https://127.0.0.1:<port><path>`` with the CA bundle of the manager's serving certificate.
"""

from __future__ import annotations

import base64
import copy
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubelocal.errors import KubeLocalError

Object = dict[str, Any]
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
_ROLE_KINDS = {"ClusterRoleBinding": "ClusterRole", "RoleBinding": "Role"}


@dataclass(frozen=True)
class Install:
    """Kueue's install, as rendered from its ``config/default``."""

    namespace: Object
    crds: tuple[Object, ...]
    rbac: tuple[Object, ...]
    """The manager's ServiceAccount, the (Cluster)RoleBindings naming it and their roles."""
    secret: Object
    """The webhook-certificate Secret (no data: the cert rotator, or kube-local, fills it)."""
    webhooks: tuple[Object, ...]
    service_account: str
    webhook_service: str
    """The Service every webhook's clientConfig names: its DNS name goes into the serving cert."""

    @property
    def namespace_name(self) -> str:
        """``kueue-system``."""
        return str(self.namespace["metadata"]["name"])

    @property
    def user(self) -> str:
        """The username of the manager's ServiceAccount, whom the rendered bindings name."""
        return f"system:serviceaccount:{self.namespace_name}:{self.service_account}"


def render(kubectl: Path, source: Path) -> Install:
    """Render ``source/config/default`` with kubectl's built-in kustomize and pick Kueue's own
    objects from it; KubeLocalError if the render fails or lacks one of them."""
    config = source / "config" / "default"
    done = subprocess.run(
        [str(kubectl), "kustomize", str(config)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise KubeLocalError(f"`kubectl kustomize {config}` failed: {done.stderr.strip()}")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    objects = [o for o in yaml.load_all(done.stdout, Loader=loader) if isinstance(o, dict)]
    namespace = _one(objects, "Namespace", config)
    deployment = _one(objects, "Deployment", config)
    account = str(deployment["spec"]["template"]["spec"]["serviceAccountName"])
    webhooks = tuple(o for o in objects if o["kind"] in WEBHOOK_KINDS)
    services = {
        hook["clientConfig"]["service"]["name"]
        for configuration in webhooks
        for hook in configuration.get("webhooks", [])
    }
    if len(webhooks) != len(WEBHOOK_KINDS) or len(services) != 1:
        raise KubeLocalError(f"{config}: expected both webhook configurations and one Service")
    return Install(
        namespace=namespace,
        crds=tuple(o for o in objects if o["kind"] == "CustomResourceDefinition"),
        rbac=tuple(_manager_rbac(objects, namespace["metadata"]["name"], account)),
        secret=_one(objects, "Secret", config),
        webhooks=webhooks,
        service_account=account,
        webhook_service=services.pop(),
    )


def _one(objects: list[Object], kind: str, config: Path) -> Object:
    found = [o for o in objects if o["kind"] == kind]
    if len(found) != 1:
        raise KubeLocalError(f"{config} renders {len(found)} {kind} objects, expected one")
    return found[0]


def _manager_rbac(objects: list[Object], namespace: str, account: str) -> Iterator[Object]:
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    for o in objects:
        if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == account:
            yield o
    for binding in (o for o in objects if o["kind"] in _ROLE_KINDS):
        if subject not in binding.get("subjects", []):
            continue
        yield binding
        role_kind = _ROLE_KINDS[binding["kind"]]
        ref = binding["roleRef"]
        for role in objects:
            if (
                role["kind"] == role_kind == ref["kind"]
                and role["metadata"]["name"] == ref["name"]
                and role["metadata"].get("namespace") == binding["metadata"].get("namespace")
            ):
                yield role


def loopback(install: Install, port: int, ca_cert: Path) -> tuple[list[Object], list[Object]]:
    """Copies of (the CRDs, the webhook configurations) with every clientConfig pointing at
    ``https://127.0.0.1:<port>`` and trusting ``ca_cert``."""
    bundle = base64.b64encode(ca_cert.read_bytes()).decode()
    crds, webhooks = copy.deepcopy(list(install.crds)), copy.deepcopy(list(install.webhooks))
    for crd in crds:
        webhook = crd["spec"].get("conversion", {}).get("webhook")
        if webhook is not None:
            webhook["clientConfig"] = _url(webhook["clientConfig"], port, bundle)
    for configuration in webhooks:
        for hook in configuration.get("webhooks", []):
            hook["clientConfig"] = _url(hook["clientConfig"], port, bundle)
    return crds, webhooks


def _url(client_config: Object, port: int, bundle: str) -> Object:
    service = client_config.get("service")
    if service is None:
        return {**client_config, "caBundle": bundle}
    return {"url": f"https://127.0.0.1:{port}{service.get('path', '/')}", "caBundle": bundle}


def secret_with(install: Install, files: dict[str, Path]) -> Object:
    """The webhook-certificate Secret holding ``files`` (key -> file), base64-encoded."""
    data = {key: base64.b64encode(path.read_bytes()).decode() for key, path in files.items()}
    return {**install.secret, "data": data}


def to_yaml(objects: list[Object]) -> str:
    """A multi-document YAML stream of ``objects``."""
    return yaml.safe_dump_all(objects, sort_keys=False)
