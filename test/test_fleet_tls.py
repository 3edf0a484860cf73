"""The fleet link over TLS: what a robot's ``fleet.ssl*`` settings demand, libpq enforces.

A CA and a server certificate for 127.0.0.1 are made with the ``openssl`` command.
The PostgreSQL of the tests (the ``pgserver`` wheel) is built without SSL, so TLS is
terminated in front of it by a small proxy here, the way a TLS-terminating load
balancer fronts a managed database: the robot connects with direct TLS negotiation
(libpq >= 17, ``sslnegotiation=direct``, ALPN ``postgresql``) and verifies the
certificate chain and host name (``verify-full``) against its ``sslrootcert``. A robot
given another CA is refused before it sends its password, and keeps serving locally.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from brainmem_ros.fleet.credentials import read_password
from brainmem_ros.fleet.errors import FleetUnavailableError
from brainmem_ros.fleet.local_server import LocalPostgres, missing_reason, setup_fleet
from brainmem_ros.fleet.sync import FleetSync

pytestmark = [
    pytest.mark.skipif(bool(missing_reason()), reason=missing_reason() or 'server available'),
    pytest.mark.skipif(shutil.which('openssl') is None, reason='the openssl command is not installed'),
]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(['openssl', *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _ca(d: Path, name: str) -> None:
    _openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', f'/CN={name}',
             '-keyout', f'{name}.key', '-out', f'{name}.crt', cwd=d)


@pytest.fixture(scope='module')
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp('certs')
    _ca(d, 'fleet-ca')
    _ca(d, 'other-ca')
    (d / 'san.ext').write_text('subjectAltName = IP:127.0.0.1\n')
    _openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key',
             '-out', 'server.csr', cwd=d)
    _openssl('x509', '-req', '-in', 'server.csr', '-CA', 'fleet-ca.crt', '-CAkey', 'fleet-ca.key',
             '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.crt', cwd=d)
    return d


class TlsProxy:
    """Accepts direct-TLS PostgreSQL connections on a port of its own; forwards them in clear."""

    def __init__(self, cert: Path, key: Path, upstream: int) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.context.set_alpn_protocols(['postgresql'])
        self.upstream = upstream
        self.listener = socket.create_server(('127.0.0.1', 0))
        self.port = self.listener.getsockname()[1]
        self.handshakes = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            tls = self.context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()  # the client refused the certificate
            return
        self.handshakes += 1
        back = socket.create_connection(('127.0.0.1', self.upstream))
        for src, dst in ((tls, back), (back, tls)):
            threading.Thread(target=_pump, args=(src, dst), daemon=True).start()

    def close(self) -> None:
        self.listener.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture(scope='module')
def tls_pg(certs: Path) -> Iterator[tuple[LocalPostgres, TlsProxy]]:
    server = LocalPostgres()
    server.start()
    proxy = TlsProxy(certs / 'server.crt', certs / 'server.key', server.port)
    yield server, proxy
    proxy.close()
    server.cleanup()


def _dsn(proxy: TlsProxy, dbname: str) -> str:
    return f'host=127.0.0.1 port={proxy.port} dbname={dbname} sslnegotiation=direct'


def test_robots_sync_and_recall_over_verified_tls(tls_pg: tuple[LocalPostgres, TlsProxy], certs: Path,
                                                  tmp_path: Path, mem_factory: object) -> None:
    pg, proxy = tls_pg
    configs = setup_fleet(pg, 'fleet_tls', ['r1', 'r2'], fleet_id='a', secrets_dir=tmp_path / 'secrets',
                          dim=384, dsn=_dsn(proxy, 'fleet_tls'), sslmode='verify-full',
                          sslrootcert=str(certs / 'fleet-ca.crt'))
    made = []
    try:
        for name in ('r1', 'r2'):
            sync = FleetSync(configs[name])
            mem = mem_factory(tmp_path / name, on_event=sync.observe)  # type: ignore[operator]
            sync.attach(mem, start=False)
            made.append((mem, sync))
        (mem1, sync1), (_mem2, sync2) = made
        hazard = mem1.store('The lift in building B is out of order')
        sync1.share([hazard.id])
        assert sync1.sync_once().sent == 1
        answer = sync2.retrieve('is the lift in building B working?', scope='fleet')
        assert answer.fleet_reached
        assert any(r.robot_id == 'r1' and r.memory.unit.id == hazard.id for r in answer.results)
        # Every connection of both robots went through TLS, and libpq says it is on.
        assert proxy.handshakes >= 2
        password = read_password(configs['r2'].credentials_file)
        with psycopg.connect(configs['r2'].dsn, user=configs['r2'].role, password=password,
                             sslmode='verify-full', sslrootcert=str(certs / 'fleet-ca.crt')) as conn:
            assert conn.pgconn.ssl_in_use
            assert conn.info.parameter_status('server_version')
    finally:
        for _, sync in made:
            sync.close()


def test_a_server_the_ca_did_not_sign_is_refused(tls_pg: tuple[LocalPostgres, TlsProxy], certs: Path,
                                                  tmp_path: Path, mem_factory: object) -> None:
    pg, proxy = tls_pg
    configs = setup_fleet(pg, 'fleet_tls_other', ['r1'], fleet_id='a', secrets_dir=tmp_path / 'secrets',
                          dim=384, dsn=_dsn(proxy, 'fleet_tls_other'), sslmode='verify-full',
                          sslrootcert=str(certs / 'other-ca.crt'), connect_timeout_s=2.0)
    before = proxy.handshakes
    sync = FleetSync(configs['r1'])
    mem = mem_factory(tmp_path / 'r1', on_event=sync.observe)  # type: ignore[operator]
    sync.attach(mem, start=False)
    try:
        unit = mem.store('The east door sticks')
        sync.share([unit.id])
        with pytest.raises(FleetUnavailableError):
            sync.sync_once()
        assert sync.stats().pending == 1  # kept for when the link is right
        answer = sync.retrieve('east door', scope='fleet')
        assert not answer.fleet_reached and answer.results[0].memory.unit.id == unit.id
        assert proxy.handshakes == before  # no handshake completed: nothing was sent
        with pytest.raises(psycopg.OperationalError, match='certificate verify failed'):
            psycopg.connect(configs['r1'].dsn, user=configs['r1'].role, password='x',
                            sslmode='verify-full', sslrootcert=str(certs / 'other-ca.crt'), connect_timeout=2)
    finally:
        sync.close()
