"""kubeconfig files with every credential embedded, so one file is all a client needs."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from kubelocal.pki import KeyPair

CLUSTER = "kube-local"


@dataclass(frozen=True)
class Context:
    """A context: its name, the user entry's name and the client certificate it uses."""

    name: str
    user: str
    credentials: KeyPair


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write(path: Path, server: str, ca: Path, contexts: Sequence[Context]) -> None:
    """Write a kubeconfig (mode 0600) with one cluster ``kube-local``; the first context is
    current."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [
            {"name": CLUSTER, "cluster": {"server": server, "certificate-authority-data": _b64(ca)}}
        ],
        "users": [
            {
                "name": context.user,
                "user": {
                    "client-certificate-data": _b64(context.credentials.cert),
                    "client-key-data": _b64(context.credentials.key),
                },
            }
            for context in contexts
        ],
        "contexts": [
            {"name": context.name, "context": {"cluster": CLUSTER, "user": context.user}}
            for context in contexts
        ],
        "current-context": contexts[0].name,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    os.replace(tmp, path)
