"""server/edge/gate.py's count of the connections not yet past `hello` (the door itself is
driven for real in tests/e2e/test_slowloris.py)."""

from __future__ import annotations

from dicehall.server.edge.gate import Gate


def test_the_bound_per_address_leaves_other_addresses_and_loopback_in() -> None:
    gate = Gate(max_pending=10, per_address=2)
    first = [gate.enter("203.0.113.7") for _ in range(2)]
    assert all(first) and gate.enter("203.0.113.7") is None
    assert gate.enter("203.0.113.8") is not None, "another address"
    assert gate.enter("127.0.0.1") is not None and gate.enter("::1") is not None
    assert gate.refused == 1
    ticket = first[0]
    assert ticket is not None
    ticket.release()
    ticket.release()  # (idempotent: a connection lost after its hello)
    assert gate.pending == 4 and gate.enter("203.0.113.7") is not None


def test_an_ipv6_client_counts_by_its_64() -> None:
    gate = Gate(max_pending=10, per_address=1)
    assert gate.enter("2001:db8:1:2::1") is not None
    assert gate.enter("2001:db8:1:2:ffff::9") is None, "the same /64"
    assert gate.enter("2001:db8:1:3::1") is not None


def test_a_full_door_drops_its_oldest_http_connection_for_a_new_one() -> None:
    gate = Gate(max_pending=3, per_address=0)
    dropped: list[str] = []
    websocket, first, second = (gate.enter("127.0.0.1") for _ in range(3))
    assert websocket is not None and first is not None and second is not None
    first.drop = lambda: dropped.append("first")
    second.drop = lambda: dropped.append("second")
    newest = gate.enter("198.51.100.1")  # (its drop is not set: as a WebSocket's)
    assert newest is not None and dropped == ["first"]
    assert gate.pending == 3 and gate.dropped == 1
    second.release()
    assert gate.enter("198.51.100.2") is not None
    assert gate.enter("198.51.100.3") is None, "only WebSockets awaiting hello: refused"
    assert gate.refused == 1 and dropped == ["first"]


def test_a_trusted_proxy_is_not_bounded_per_address() -> None:
    gate = Gate(max_pending=10, per_address=1, trusted="10.0.0.0/24, 192.0.2.9")
    assert all(gate.enter("10.0.0.5") for _ in range(3))
    assert all(gate.enter("192.0.2.9") for _ in range(3))
    assert gate.enter("192.0.2.10") and gate.enter("192.0.2.10") is None
    anyone = Gate(max_pending=10, per_address=1, trusted="*")
    assert all(anyone.enter("198.51.100.1") for _ in range(3))
