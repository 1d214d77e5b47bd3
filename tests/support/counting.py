"""What a client read from the network, counted on the real connection.

A test of a hostile server (a line that never ends, an error body that never ends) must show
that the client stopped reading. What the server managed to send says little: a loopback
connection's socket buffers hold megabytes (the receive buffer grows up to
``net.ipv4.tcp_rmem``'s maximum, 32 MB on some machines) and fill at whatever pace the load
allows, so that count varies from run to run. What the client took off the socket does not.

`CountingBackend` is httpcore's own network backend, wrapped to count the reads made on each
socket and the bytes they brought (headers and chunk framing included); `counting_transport`
gives an httpx transport that uses it, for an adapter's ``transport=`` or an
``httpx.AsyncClient``.
"""

from __future__ import annotations

from typing import Any

import httpcore
import httpx

__all__ = ["CountingBackend", "counting_transport"]


class _CountingStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream, counter: CountingBackend) -> None:
        self._inner = inner
        self._counter = counter

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        data = await self._inner.read(max_bytes, timeout)
        self._counter.reads += 1
        self._counter.bytes_read += len(data)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class CountingBackend(httpcore.AsyncNetworkBackend):
    """httpcore's AnyIO backend, counting the socket reads of the connections it opens."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()
        self.reads = 0  #: socket reads made
        self.bytes_read = 0  #: bytes those reads brought

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        return _CountingStream(await self._inner.connect_tcp(*args, **kwargs), self)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def counting_transport(backend: CountingBackend) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose connections are opened (and counted) by ``backend``."""
    transport = httpx.AsyncHTTPTransport()
    # httpx has no public hook for the network backend; its pool takes one.
    transport._pool = httpcore.AsyncConnectionPool(network_backend=backend)
    return transport
