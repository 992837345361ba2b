"""Certificates for tests of TLS to Redis, made by the `openssl` command line: a CA, a
certificate for the servers (for 127.0.0.1 only, so that `localhost` is a name it does not
match) and one for the clients, each signed by that CA, in a directory of the test's.

Real files read by the real `redis-server` and by the code under test, never a stub.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote


def openssl_binary() -> str:
    path = shutil.which("openssl")
    if path is None:
        raise RuntimeError("openssl is not installed; `make redis` installs it (apt-get)")
    return path


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path
    """The servers' certificate (Redis also presents it to the nodes it connects to)."""
    key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    """A CA that signed nothing here: trusting it alone must fail."""

    def query(self, **more: str) -> str:
        """`?ssl_ca_certs=...&ssl_certfile=...&ssl_keyfile=...` (the client's), plus `more`."""
        params = {
            "ssl_ca_certs": str(self.ca),
            "ssl_certfile": str(self.client_cert),
            "ssl_keyfile": str(self.client_key),
            **more,
        }
        return "?" + "&".join(f"{k}={quote(v, safe='/')}" for k, v in params.items())

    def server_args(self) -> tuple[str, ...]:
        """redis-server's (and redis-sentinel's) options for these files."""
        return (
            *("--tls-cert-file", str(self.cert), "--tls-key-file", str(self.key)),
            *("--tls-ca-cert-file", str(self.ca)),
        )

    def cli_args(self) -> tuple[str, ...]:
        """redis-cli's options to reach a server with these files."""
        return (
            "--tls",
            *("--cacert", str(self.ca), "--cert", str(self.client_cert)),
            *("--key", str(self.client_key)),
        )


def _openssl(workdir: Path, *args: str) -> None:
    subprocess.run(
        [openssl_binary(), *args], cwd=workdir, check=True, capture_output=True, timeout=60
    )


def _ca(workdir: Path, name: str) -> None:
    _openssl(
        workdir,
        *("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
        *("-nodes", "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2"),
        *("-subj", f"/CN=dicehall test {name}"),
    )


def _signed(workdir: Path, name: str, extensions: str) -> None:
    (workdir / f"{name}.ext").write_text(extensions + "\n")
    _openssl(
        workdir,
        *("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
        *("-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr"),
        *("-subj", f"/CN=dicehall test {name}"),
    )
    _openssl(
        workdir,
        *("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key"),
        *("-CAcreateserial", "-out", f"{name}.crt", "-days", "2"),
        *("-extfile", f"{name}.ext"),
    )


def make_certs(workdir: Path) -> Certs:
    """A fresh CA and certificates in `workdir` (which must exist)."""
    _ca(workdir, "ca")
    _ca(workdir, "other-ca")
    _signed(
        workdir,
        "redis",
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth",
    )
    _signed(workdir, "client", "extendedKeyUsage=clientAuth")
    return Certs(
        ca=workdir / "ca.crt",
        cert=workdir / "redis.crt",
        key=workdir / "redis.key",
        client_cert=workdir / "client.crt",
        client_key=workdir / "client.key",
        other_ca=workdir / "other-ca.crt",
    )
