"""A lean HTTP/1.1 client for JSON POSTs: the transport of the OpenAI-compatible provider.

Why not the ``openai`` SDK or ``httpx``: profiling ``bench_run`` (issue 16) put 2.2 ms of
client CPU on every request, four fifths of it in the SDK's request building and response
models and in httpx/httpcore (its connection pool alone rescans every connection per
request). A run sends one kind of request thousands of times, so this client does only that:
keep-alive connections on asyncio streams (TLS through :mod:`ssl` for ``https``), a POST
with a ready body, a response framed by ``Content-Length``, ``chunked`` encoding or the end
of the connection, ``gzip``/``deflate`` bodies decoded.

Failures surface as :class:`TimeoutError` (the caller's deadline), :class:`RemoteProtocolError`
(the server closed the connection or sent something that is not HTTP) and :class:`OSError`
subclasses (refused, unreachable, TLS); the caller decides about retries. A connection is
reused only after a complete response the server did not mark ``Connection: close``; an idle
one the server has closed meanwhile is dropped before use.

When the environment names a proxy for the endpoint (``HTTPS_PROXY`` and friends, which the
old client honoured), :func:`make_client` returns :class:`HttpxClient`, the same interface
over ``httpx`` (slower, complete).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import urllib.request
import zlib
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from maptab.errors import MaptabError

__all__ = ["HTTPClient", "HttpxClient", "RemoteProtocolError", "Response", "make_client"]


class RemoteProtocolError(MaptabError, ConnectionError):
    """The server closed the connection early or answered with something that is not HTTP/1.1."""


@dataclass(slots=True)
class Response:
    """A complete response: status, headers (names lower-case), body (decoded)."""

    status: int
    headers: dict[str, str]
    body: bytes


class Client(Protocol):
    async def post(self, path: str, body: bytes) -> Response: ...

    async def aclose(self) -> None: ...


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


class HTTPClient:
    """Keep-alive POSTs of JSON bodies to one origin (``base_url`` with its path prefix).

    ``headers`` are sent with every request (e.g. ``Authorization``). Connections are opened
    on demand and kept while idle (the caller bounds how many requests are in flight).
    """

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"base URL must be http(s)://HOST[:PORT][/PATH], not {base_url!r}")
        self.host = url.hostname
        self.tls = url.scheme == "https"
        self.port = url.port or (443 if self.tls else 80)
        self.prefix = url.path.rstrip("/")
        default_port = self.port == (443 if self.tls else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        authority = host if default_port else f"{host}:{self.port}"
        fixed = {
            "Host": authority,
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "Content-Type": "application/json",
            **headers,
        }
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if self.tls else None
        self._idle: deque[_Conn] = deque()

    async def _connect(self) -> _Conn:
        reader, writer = await asyncio.open_connection(
            self.host,
            self.port,
            ssl=self._ssl,
            server_hostname=self.host if self.tls else None,
            limit=1 << 20,
        )
        return _Conn(reader, writer)

    async def post(self, path: str, body: bytes) -> Response:
        """POST ``body`` (JSON) to ``base_url + path``; the response, whatever its status."""
        conn = None
        while self._idle:
            cand = self._idle.pop()
            if cand.usable():
                conn = cand
                break
            cand.close()
        if conn is None:
            conn = await self._connect()
        try:
            conn.writer.write(
                b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n"
                % ((self.prefix + path).encode("latin-1"), self._head, len(body))
                + body
            )
            resp, keep = await _read_response(conn.reader)
        except BaseException:  # timeouts and cancellation included: the stream is unusable
            conn.close()
            raise
        if keep:
            self._idle.append(conn)
        else:
            conn.close()
        return resp

    async def aclose(self) -> None:
        while self._idle:
            conn = self._idle.pop()
            conn.close()
            with contextlib.suppress(OSError, ssl.SSLError):  # already gone: nothing to free
                await conn.writer.wait_closed()


async def _read_response(reader: asyncio.StreamReader) -> tuple[Response, bool]:
    """The next response on ``reader`` and whether the connection may be reused."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        raise RemoteProtocolError(
            "Server disconnected without sending a response."
            if not exc.partial
            else "Server disconnected in the middle of the response headers."
        ) from None
    except asyncio.LimitOverrunError:
        raise RemoteProtocolError("response headers too long") from None
    lines = head.decode("latin-1").split("\r\n")
    status_line = lines[0].split(" ", 2)
    if len(status_line) < 2 or not status_line[0].startswith("HTTP/1."):
        raise RemoteProtocolError(f"not an HTTP/1.x response: {lines[0][:80]!r}")
    try:
        status = int(status_line[1])
    except ValueError:
        raise RemoteProtocolError(f"bad status line: {lines[0][:80]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    keep = headers.get("connection", "").lower() != "close" and status_line[0] != "HTTP/1.0"
    try:
        if status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        elif "content-length" in headers:
            try:
                length = int(headers["content-length"])
            except ValueError:
                raise RemoteProtocolError("bad Content-Length") from None
            body = await reader.readexactly(length)
        else:  # framed by the end of the connection
            body = await reader.read()
            keep = False
    except asyncio.IncompleteReadError:
        raise RemoteProtocolError("Server disconnected in the middle of the response.") from None
    encoding = headers.get("content-encoding", "").lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        try:
            wbits = 47 if encoding != "deflate" else 15  # 47: gzip or zlib header
            body = zlib.decompress(body, wbits)
        except zlib.error as exc:
            if encoding != "deflate":
                raise RemoteProtocolError(f"bad {encoding} body ({exc})") from None
            body = zlib.decompress(body, -15)  # raw deflate, as some servers send it
    return Response(status, headers, body), keep


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise RemoteProtocolError("bad chunk size") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise RemoteProtocolError("chunk not followed by CRLF")


class HttpxClient:
    """The :class:`HTTPClient` interface over ``httpx`` (proxies from the environment)."""

    def __init__(self, base_url: str, headers: dict[str, str], max_connections: int) -> None:
        import httpx

        self._httpx = httpx
        limits = httpx.Limits(max_connections=max_connections)
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Content-Type": "application/json", **headers},
            limits=limits,
            timeout=None,  # the caller's deadline applies
            trust_env=True,
        )

    async def post(self, path: str, body: bytes) -> Response:
        httpx = self._httpx
        try:
            r = await self._client.post(path, content=body)
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.RemoteProtocolError as exc:
            raise RemoteProtocolError(str(exc)) from None
        except httpx.TransportError as exc:
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from None
        return Response(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content)

    async def aclose(self) -> None:
        await self._client.aclose()


def _proxied(base_url: str) -> bool:
    url = urlsplit(base_url)
    proxies: dict[str, Any] = urllib.request.getproxies()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(url.hostname or "")


def make_client(base_url: str, headers: dict[str, str], max_connections: int) -> Client:
    """:class:`HTTPClient` for ``base_url``, or :class:`HttpxClient` when a proxy applies."""
    if _proxied(base_url):
        return HttpxClient(base_url, headers, max_connections)
    return HTTPClient(base_url, headers)
