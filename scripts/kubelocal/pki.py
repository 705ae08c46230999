"""A throwaway PKI made with the ``openssl`` CLI: a CA, the apiserver's serving certificate,
a service-account key pair and one client certificate per identity (CN = user, O = group)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kubelocal.errors import KubeLocalError

SERVING_NAMES = (
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
    "IP:127.0.0.1",
    "IP:10.96.0.1",
)
"""The apiserver's names: loopback, and the in-cluster service names (config only, no traffic)."""
DAYS = 365


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Identity:
    """A client certificate's subject: Kubernetes reads CN as the user and O as the group."""

    file_stem: str
    user: str
    group: str | None = None


@dataclass(frozen=True)
class Pki:
    """Every file the control plane needs."""

    ca: KeyPair
    apiserver: KeyPair
    service_account_key: Path
    service_account_pub: Path
    clients: dict[str, KeyPair]
    """Client certificates by Identity.file_stem."""


def make_pki(directory: Path, identities: Sequence[Identity]) -> Pki:
    """Create the CA, serving cert, service-account keys and client certs in ``directory``."""
    ca = make_ca(directory, "ca", "kube-local-ca")
    apiserver = issue(
        directory, ca, "apiserver", "kube-apiserver", None, "serverAuth", SERVING_NAMES
    )
    sa_key, sa_pub = directory / "service-account.key", directory / "service-account.pub"
    _openssl("genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048", out=sa_key)
    _openssl("pkey -pubout", **{"in": sa_key}, out=sa_pub)
    clients = {
        identity.file_stem: issue(
            directory, ca, identity.file_stem, identity.user, identity.group, "clientAuth", ()
        )
        for identity in identities
    }
    _private(directory)
    return Pki(ca, apiserver, sa_key, sa_pub, clients)


def _private(directory: Path) -> None:
    for path in directory.iterdir():
        if path.suffix in (".key", ".csr", ".cnf"):
            os.chmod(path, 0o600)


def make_ca(
    directory: Path, stem: str, common_name: str, names: Sequence[str] = (), *, rsa: bool = False
) -> KeyPair:
    """A self-signed CA ``<stem>.crt``/``<stem>.key`` in ``directory`` (made if missing), valid
    10 years; ``names`` become its subjectAltName; ``rsa`` gives a 2048-bit PKCS#1 RSA key (some
    Go code parses only those) instead of P-256."""
    if shutil.which("openssl") is None:
        raise KubeLocalError("openssl is not on PATH: apt-get install openssl")
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    ca = KeyPair(directory / f"{stem}.crt", directory / f"{stem}.key")
    _new_key(ca.key, rsa)
    extensions = [
        "basicConstraints = critical,CA:TRUE",
        "keyUsage = critical,keyCertSign,cRLSign,digitalSignature",
        "subjectKeyIdentifier = hash",
    ]
    if names:
        extensions.append("subjectAltName = " + ",".join(names))
    conf = _conf(directory / f"{stem}.cnf", common_name, None, extensions)
    _openssl(
        "req -x509 -new",
        key=ca.key,
        config=conf,
        extensions="ext",
        days=str(DAYS * 10),
        set_serial=_serial(),
        out=ca.cert,
    )
    _private(directory)
    return ca


def issue(
    directory: Path,
    ca: KeyPair,
    stem: str,
    common_name: str,
    organization: str | None,
    usage: str,
    names: Sequence[str],
) -> KeyPair:
    """A certificate ``<stem>.crt``/``<stem>.key`` signed by ``ca``, valid a year: subject CN (and
    O if given), extendedKeyUsage ``usage`` (``serverAuth``/``clientAuth``), subjectAltName
    ``names`` (``DNS:x``, ``IP:y``)."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    pair = KeyPair(directory / f"{stem}.crt", directory / f"{stem}.key")
    extensions = [
        "basicConstraints = critical,CA:FALSE",
        "keyUsage = critical,digitalSignature",
        f"extendedKeyUsage = {usage}",
        "subjectKeyIdentifier = hash",
        "authorityKeyIdentifier = keyid",
    ]
    if names:
        extensions.append("subjectAltName = " + ",".join(names))
    conf = _conf(directory / f"{stem}.cnf", common_name, organization, extensions)
    csr = directory / f"{stem}.csr"
    _new_key(pair.key, False)
    _openssl("req -new", key=pair.key, config=conf, out=csr)
    _openssl(
        "x509 -req",
        **{"in": csr},
        CA=ca.cert,
        CAkey=ca.key,
        set_serial=_serial(),
        days=str(DAYS),
        extfile=conf,
        extensions="ext",
        out=pair.cert,
    )
    _private(directory)
    return pair


def _conf(path: Path, common_name: str, organization: str | None, extensions: list[str]) -> Path:
    subject = ([f"O = {organization}"] if organization else []) + [f"CN = {common_name}"]
    header = ["[req]", "distinguished_name = dn", "prompt = no", "", "[dn]", *subject, ""]
    text = "\n".join([*header, "[ext]", *extensions])
    path.write_text(text + "\n")
    return path


def _new_key(path: Path, rsa: bool) -> None:
    if rsa:
        _openssl("genrsa -traditional", out=path)
    else:
        _openssl("genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256", out=path)


def _serial() -> str:
    return str(secrets.randbits(63) | 1)


def _openssl(command: str, **options: str | Path) -> None:
    """Run ``openssl COMMAND -KEY VALUE...`` (``command`` split on spaces, option order kept)."""
    argv = ["openssl", *command.split()]
    for name, value in options.items():
        argv += [f"-{name}", str(value)]
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    if done.returncode != 0:
        raise KubeLocalError(f"`{' '.join(argv)}` failed: {done.stderr.strip()}")
