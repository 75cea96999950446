"""A real DNS server (UDP, twisted.names messages) answering A and AAAA queries from a table the
test can change between lookups. Runs in a thread: no reactor in the test process."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections import Counter

from twisted.names import dns


class DNSServer:
    """``table[name]`` lists the addresses (IPv4 and IPv6) a name resolves to; a name that is not
    in the table is NXDOMAIN. Every answer has TTL 0. ``queries`` counts (name, type) lookups."""

    def __init__(self, host: str = "127.0.0.1"):
        self.table: dict[str, list[str]] = {}
        self.queries: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((host, 0))
        self._sock.settimeout(0.2)
        self.address = f"{host}:{self._sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="dns")
        self._thread.start()

    def set(self, name: str, *addresses: str) -> None:
        with self._lock:
            self.table[name.lower()] = list(addresses)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self._sock.recvfrom(4096)
            except (TimeoutError, OSError):
                continue
            query = dns.Message()
            try:
                query.fromStr(data)
            except Exception:  # not a DNS message: ignore it, as a server would
                continue
            self._sock.sendto(self.answer(query).toStr(), peer)

    def answer(self, query: dns.Message) -> dns.Message:
        reply = dns.Message(id=query.id, answer=1, opCode=query.opCode, recDes=query.recDes, recAv=1, auth=1)
        reply.queries = query.queries
        for q in query.queries:
            name = q.name.name.decode("ascii", "replace").lower().rstrip(".")
            self.queries[(name, dns.QUERY_TYPES.get(q.type, str(q.type)))] += 1
            with self._lock:
                addresses = self.table.get(name)
            if addresses is None:
                reply.rCode = dns.ENAME
                continue
            for address in map(ipaddress.ip_address, addresses):
                if q.type == dns.A and address.version == 4:
                    payload: dns.Record_A | dns.Record_AAAA = dns.Record_A(str(address), ttl=0)
                elif q.type == dns.AAAA and address.version == 6:
                    payload = dns.Record_AAAA(str(address), ttl=0)
                else:
                    continue
                reply.answers.append(dns.RRHeader(name=q.name.name, type=q.type, ttl=0, payload=payload))
        return reply

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
