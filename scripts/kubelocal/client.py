"""A minimal HTTPS GET against the apiserver with a client certificate (no kubectl needed)."""

from __future__ import annotations

import http.client
import ssl
from pathlib import Path
from urllib.parse import urlsplit


class ApiClient:
    """GETs paths of one apiserver as one client-certificate identity."""

    def __init__(self, server: str, ca: Path, cert: Path, key: Path) -> None:
        """``server`` is ``https://host:port``; the CA verifies it, the cert and key identify us."""
        parts = urlsplit(server)
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"server {server!r} has no host:port")
        self._host, self._port = parts.hostname, parts.port
        self._context = ssl.create_default_context(cafile=str(ca))
        self._context.load_cert_chain(str(cert), str(key))

    def get(self, path: str, timeout: float = 5.0) -> tuple[int, str]:
        """(HTTP status, body) of GET ``path``; OSError if the server cannot be reached."""
        connection = http.client.HTTPSConnection(
            self._host, self._port, context=self._context, timeout=timeout
        )
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, response.read().decode(errors="replace")
        finally:
            connection.close()


def http_get(url: str, timeout: float = 2.0) -> tuple[int, str]:
    """(status, body) of a plain-HTTP GET (etcd's /health on loopback); OSError if unreachable."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        connection.request("GET", parts.path or "/")
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()
