"""OpenAI-compatible chat completions (hosted APIs, vLLM / SGLang servers), SPEC 16.

Requests are POSTed to ``BASE_URL/chat/completions`` with the body the ``openai`` client
sends (``model``, ``messages`` in the wire format, the generation settings, any
``extra_body``) through ``httpx``: keep-alive connections, as many as ``concurrency``,
gzip/deflate answers, proxies and CA certificates from the environment (``HTTPS_PROXY``,
``ALL_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``…). ``base_url`` defaults to
``OPENAI_BASE_URL``, then to ``https://api.openai.com/v1``.

Retries are ours, so that the policy is explicit and testable: 429, 408, 409, 425, 5xx,
timeouts (``timeout`` seconds to connect, to send, or to wait for the answer), dropped
connections and malformed response bodies are retried with exponential backoff and jitter
(the wait before retry ``n`` is ``min(max_backoff, backoff · 2^n · U[0.5, 1.5])``, or a
server's ``Retry-After`` if longer); any other 4xx fails at once with the server's
``error.message``. The API key is read from the environment variable ``api_key_env``; it
is never stored in ``settings``, and an error message or answer that repeats it (a server
echoing the request) has it masked.

A server that cannot be reached stops the run rather than failing each sample slowly (SPEC
16). Before a run, :meth:`OpenAIProvider.probe` sends one ``GET BASE_URL/models``: any HTTP
answer, even 401 or 404, proves the server is there; a connection that cannot be made
(refused, unknown host, TLS failure, no connection within :data:`CONNECT_TIMEOUT` seconds)
raises :class:`~maptab.run.provider.EndpointUnreachable`. During the run, the wait before
retrying such a connection is at most :data:`CONNECT_RETRY_CAP` seconds, and
:data:`DOWN_AFTER` of them in a row, across all requests, raise it too (the breaker); any
HTTP answer resets the count. Answers from a live server (429, 5xx…), dropped connections
and read timeouts are retried as above and do not count.

``base_url`` may list several servers (``--base-url A --base-url B``) serving the same model:
each request goes to the one with the fewest requests in flight (ties: round robin) and its
retries stay there; each is probed before the run, and the breaker counts per server, so a
dead or lost server stops the run as above, named. ``settings["base_url"]`` is then the list.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import ssl
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from maptab._reasoning import split_reasoning
from maptab._version import __version__
from maptab.errors import MaptabError
from maptab.run.provider import (
    Completion,
    EndpointUnreachable,
    ProviderConfigError,
    ProviderError,
    RateLimiter,
    ToolCall,
)
from maptab.run.requests import ChatRequest

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_URL_CACHE = 8  # JSON-encoded image URLs kept (requests come grouped by map)
_RETRY_STATUS = {408, 409, 425, 429}
# connections per httpx client: its pool re-checks all of its connections (the idle ones
# against all the others) whenever a request starts or ends, about 5 ms of CPU per request
# at 64 connections in one client
_PER_CLIENT = 4
CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection at most (less when ``timeout`` is less)."""
CONNECT_RETRY_CAP = 2.0
"""Seconds to wait at most before retrying a connection that could not be made."""
DOWN_AFTER = 5
"""Connections in a row that could not be made, across requests, that stop the run."""


class _Server:
    """One endpoint: its URLs, its HTTP clients, its requests in flight, its breaker count."""

    def __init__(self, base: str) -> None:
        self.base_url = base
        self.url = httpx.URL(base + "/chat/completions")
        self.clients: list[httpx.AsyncClient] = []
        self.free: list[httpx.AsyncClient] = []  # a client once per connection not in use
        self.in_flight = 0
        self.down = 0  # connections in a row that could not be made (the breaker's count)


class OpenAIProvider:
    """Chat completions from an OpenAI-compatible endpoint (see the module docstring).

    ``concurrency`` bounds requests in flight (an asyncio semaphore) and open
    connections; ``timeout`` bounds, in seconds, each attempt's connect, send and wait for
    the answer; ``rpm`` optionally limits request starts per minute. Defaults follow
    the papers: temperature 0, at most 2,048 new tokens. ``thinking_budget`` (the papers use
    4,096 for thinking models) is sent as ``{"thinking": {"type": "enabled",
    "budget_tokens": N}}`` only when set; ``extra_body`` passes anything else a server wants
    (e.g. vLLM's ``{"chat_template_kwargs": {"enable_thinking": true}}``).

    Without the key variable set, a ``base_url`` (a local server) gets a placeholder key;
    the hosted default endpoint raises :class:`ProviderConfigError`. The HTTP clients (one
    per :data:`_PER_CLIENT` connections, sharing one TLS context) are made on first use and
    closed by :meth:`aclose`; a pickled provider leaves them behind.
    """

    name = "openai"
    uses_images = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str] | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 16,
        timeout: float = 120.0,
        max_retries: int = 6,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        rpm: float | None = None,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        thinking_budget: int | None = None,
        extra_body: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        if concurrency < 1:
            raise ProviderConfigError("--concurrency must be at least 1")
        if timeout <= 0:
            raise ProviderConfigError("--timeout must be positive")
        key = os.environ.get(api_key_env)
        # masked in anything recorded; a short placeholder ("x", "EMPTY") could be a word of
        # an answer, and is no secret
        self._secret = key if key and len(key) >= 8 else None
        if not key:
            if base_url is None:
                raise ProviderConfigError(
                    f"set the API key in the environment variable {api_key_env}"
                )
            key = "EMPTY"
        self.model = model
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.timeout = timeout
        if not isinstance(base_url, str | None):
            base_url = list(base_url) or None
            if base_url is not None and len(base_url) == 1:
                base_url = base_url[0]
        urls = [base_url] if isinstance(base_url, str) else base_url
        urls = urls or [os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL]
        self._servers = [_server(url) for url in urls]
        if len({s.base_url for s in self._servers}) < len(self._servers):
            raise ProviderConfigError("--base-url: the same server is given twice")
        self.base_url = self._servers[0].base_url
        self._next = 0  # where the round robin among equally busy servers starts
        self._headers = {
            "Authorization": f"Bearer {key}",
            "User-Agent": f"maptab/{__version__}",
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        # least-in-flight dispatch never puts more than ceil(concurrency / servers) on one
        self._connections = -(-concurrency // len(self._servers))
        self._sem = asyncio.Semaphore(concurrency)
        self._limiter = RateLimiter(rpm)
        self._rng = random.Random(seed)
        self._params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if thinking_budget:
            self._params["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        self._params.update(extra_body or {})
        self.settings: dict[str, Any] = {
            "base_url": base_url,
            "api_key_env": api_key_env,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "thinking_budget": thinking_budget,
            "extra_body": extra_body or None,
            "timeout": timeout,
            "max_retries": max_retries,
            "rpm": rpm,
        }
        self._token = f"maptab-image-{random.getrandbits(64):016x}"
        self._token_json = json.dumps(self._token).encode()
        self._urls: dict[str, bytes] = {}
        self.attempts = 0  # HTTP attempts made, retries included (for tests and reports)

    def body(self, request: ChatRequest) -> bytes:
        """The JSON body sent for ``request``: the bytes of ``json.dumps({"model", "messages",
        settings…}, ensure_ascii=False)``, built without re-escaping image data URLs.

        Escaping a multi-megabyte base64 URL costs tens of milliseconds per request, and a
        run sends the same few URLs thousands of times (one per map); each is encoded once
        (the last :data:`_URL_CACHE` kept) and spliced into a body whose images are tokens.
        """
        urls: list[str] = []
        messages = [_tokenised(m, urls, self._token) for m in request.messages]
        tools = {"tools": request.tools} if request.tools else {}  # tool-use mode only
        payload = {"model": self.model, "messages": messages, **tools, **self._params}
        skeleton = json.dumps(payload, ensure_ascii=False).encode()
        if not urls:
            return skeleton
        pieces = skeleton.split(self._token_json)
        if len(pieces) != len(urls) + 1:  # the token occurs elsewhere: encode plainly
            full = {"model": self.model, "messages": request.messages, **tools, **self._params}
            return json.dumps(full, ensure_ascii=False).encode()
        out = [pieces[0]]
        for url, piece in zip(urls, pieces[1:], strict=True):
            out += (self._url_json(url), piece)
        return b"".join(out)

    def _url_json(self, url: str) -> bytes:
        data = self._urls.pop(url, None)  # re-inserted below: most recent last
        if data is None:
            data = json.dumps(url, ensure_ascii=False).encode()
            if len(self._urls) >= _URL_CACHE:
                del self._urls[next(iter(self._urls))]
        self._urls[url] = data
        return data

    async def probe(self) -> None:
        """One ``GET BASE_URL/models`` before a run: raises
        :class:`~maptab.run.provider.EndpointUnreachable` when no connection can be made; any
        HTTP answer, or a slow one, passes (SPEC 16)."""
        if not self._servers[0].clients:
            self._open()
        for server in self._servers:
            url = server.base_url + "/models"
            try:
                await server.clients[0].get(url, timeout=min(self.timeout, CONNECT_TIMEOUT))
            except Exception as exc:
                why = _unreachable(exc)
                if why:
                    raise EndpointUnreachable(
                        f"cannot reach {server.base_url} ({why}); is the server running? "
                        "check --base-url"
                    ) from None

    async def complete(self, request: ChatRequest) -> Completion:
        """Send one request, retrying transient failures; raises :class:`ProviderError`, or
        :class:`~maptab.run.provider.EndpointUnreachable` once the server is gone."""
        body = self.body(request)
        async with self._sem:
            if not self._servers[0].clients:
                self._open()
            server = self._pick()
            client = server.free.pop()  # the semaphore and the dispatch leave one free
            server.in_flight += 1
            try:
                return await self._send(server, client, body)
            finally:
                server.in_flight -= 1
                if not client.is_closed:
                    server.free.append(client)

    def _pick(self) -> _Server:
        """The server with the fewest requests in flight; ties: the next in round robin."""
        n = len(self._servers)
        order = [self._servers[(self._next + k) % n] for k in range(n)]
        server = min(order, key=lambda s: s.in_flight)  # the first of the least busy
        self._next = (self._servers.index(server) + 1) % n
        return server

    async def _send(self, server: _Server, client: httpx.AsyncClient, body: bytes) -> Completion:
        for attempt in range(self.max_retries + 1):
            await self._limiter.wait()
            self.attempts += 1
            down = None
            try:
                resp = await client.post(server.url, content=body)
                server.down = 0  # an answer: the server is there
                if resp.status_code != 200:
                    raise _StatusError(resp)
                c = _completion(json.loads(resp.content))
                c.text, c.reasoning = self._mask(c.text), self._mask(c.reasoning)
                return c
            except Exception as exc:  # classified below; unknown errors are not retried
                down = _unreachable(exc)
                if down:
                    server.down += 1
                    if server.down >= DOWN_AFTER:
                        raise EndpointUnreachable(
                            f"lost {server.base_url}: {server.down} connection attempts in a row "
                            f"failed ({down})"
                        ) from None
                retry, floor, why = _classify(exc, self._mask)
                if not retry or attempt == self.max_retries:
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise ProviderError(f"{why}{tries}") from None
            delay = self.retry_delay(attempt, floor)
            await asyncio.sleep(min(delay, CONNECT_RETRY_CAP) if down else delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def retry_delay(self, attempt: int, floor: float = 0.0) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based):
        ``min(max_backoff, backoff · 2^attempt · U[0.5, 1.5])``, at least ``floor`` (a
        server's ``Retry-After``)."""
        jittered = self.backoff * 2.0 ** min(attempt, 60) * self._rng.uniform(0.5, 1.5)
        return max(floor, min(self.max_backoff, jittered))

    def _mask(self, text: str) -> str:
        """``text`` with the API key from the environment (8 characters or more) masked."""
        return text.replace(self._secret, "***") if self._secret and text else text

    def _open(self) -> None:
        tls = httpx.create_ssl_context(trust_env=True)  # SSL_CERT_FILE / SSL_CERT_DIR
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT))
        for server in self._servers:
            left = self._connections
            while left:
                n = min(_PER_CLIENT, left)
                client = httpx.AsyncClient(
                    headers=self._headers,
                    verify=tls,
                    limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
                    timeout=timeout,
                    trust_env=True,  # HTTPS_PROXY, ALL_PROXY, NO_PROXY
                )
                server.clients.append(client)
                server.free += [client] * n
                left -= n

    async def aclose(self) -> None:
        """Close the HTTP connections (a later request opens new ones)."""
        for server in self._servers:
            clients, server.clients, server.free = server.clients, [], []
            for client in clients:
                await client.aclose()

    @property
    def _clients(self) -> list[httpx.AsyncClient]:
        """Every server's open HTTP clients."""
        return [c for s in self._servers for c in s.clients]

    @property
    def _down(self) -> int:
        """The first server's breaker count."""
        return self._servers[0].down

    @_down.setter
    def _down(self, value: int) -> None:
        self._servers[0].down = value

    def __getstate__(self) -> dict[str, Any]:
        servers = [_Server(s.base_url) for s in self._servers]  # without their clients
        return {**self.__dict__, "_servers": servers}


def _server(url: str) -> _Server:
    """A :class:`_Server` for ``url``; a URL that is not ``http(s)://HOST…`` raises
    :class:`ProviderConfigError`."""
    try:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            return _Server(url.rstrip("/"))
    except (ValueError, httpx.InvalidURL):
        pass
    raise ProviderConfigError(
        f"--base-url: base URL must be http(s)://HOST[:PORT][/PATH], not {url!r}"
    )


def _tokenised(message: Any, urls: list[str], token: str) -> Any:
    """``message`` with each image part's URL replaced by ``token`` (the URL appended to
    ``urls``); other parts and keys unchanged, in order."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        image = part.get("image_url") if isinstance(part, dict) else None
        if isinstance(image, dict) and isinstance(image.get("url"), str):
            urls.append(image["url"])
            part = {**part, "image_url": {**image, "url": token}}
        parts.append(part)
    return {**message, "content": parts}


class _StatusError(MaptabError):
    """A non-200 answer (internal: classified into a retry or a :class:`ProviderError`)."""

    def __init__(self, resp: httpx.Response) -> None:
        super().__init__(resp.status_code)
        self.status = resp.status_code
        self.retry_after = resp.headers.get("retry-after")
        self.message = _error_message(resp.content)


def _error_message(body: bytes) -> str:
    """The server's ``error.message`` (or top-level ``message``), else the start of the body."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300]
    err = data.get("error", data) if isinstance(data, dict) else None
    msg = err.get("message") if isinstance(err, dict) else None
    return msg if isinstance(msg, str) and msg else ""


def _completion(data: Any) -> Completion:
    """A :class:`Completion` from a decoded chat-completion body; a malformed one raises
    ``ValueError``/``TypeError``/``KeyError``/``AttributeError``."""
    choices = data.get("choices")
    if not choices:
        raise ValueError("response has no choices")
    msg = choices[0]["message"]
    content = msg.get("content") or ""
    if not isinstance(content, str):
        raise TypeError("message content is not a string")
    native = msg.get("reasoning_content") or msg.get("reasoning") or ""
    text, think = split_reasoning(content)
    reasoning = "\n\n".join(r for r in (str(native).strip(), think) if r)
    usage = data.get("usage") or {}
    return Completion(
        text,
        reasoning,
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        _tool_calls(msg.get("tool_calls")),
    )


def _tool_calls(calls: Any) -> list[ToolCall]:
    """The tool calls of a response message (OpenAI format; arguments sent as an object
    rather than a JSON string are re-encoded); a malformed list raises ``TypeError``."""
    if not calls:
        return []
    if not isinstance(calls, list):
        raise TypeError("message tool_calls is not a list")
    out = []
    for n, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise TypeError("a tool call has no function name")
        args = fn.get("arguments")
        if not isinstance(args, str):
            args = json.dumps(args if args is not None else {}, ensure_ascii=False)
        out.append(ToolCall(str(call.get("id") or f"call_{n}"), fn["name"], args))
    return out


def _classify(exc: Exception, mask: Callable[[str], str]) -> tuple[bool, float, str]:
    """``(retryable, minimum wait in s, one-line description)`` of a failed attempt; ``mask``
    is applied to the server's or library's message before it is shortened."""

    def said(text: str) -> str:
        return _short(mask(text))

    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return True, 0.0, "timeout"
    if isinstance(exc, _StatusError):
        status = exc.status
        retry = status in _RETRY_STATUS or status >= 500
        detail = said(exc.message)
        return (
            retry,
            _retry_after(exc.retry_after),
            f"HTTP {status}{': ' if detail else ''}{detail}",
        )
    if isinstance(exc, httpx.RequestError | OSError):  # refused, dropped, TLS, proxy, bad gzip
        detail = said(str(exc))
        return True, 0.0, f"connection error ({type(exc).__name__}{': ' if detail else ''}{detail})"
    if isinstance(exc, ValueError | KeyError | IndexError | AttributeError | TypeError):
        return True, 0.0, f"malformed response ({type(exc).__name__}: {said(str(exc))})"
    return False, 0.0, f"{type(exc).__name__}: {said(str(exc))}"


def _unreachable(exc: BaseException) -> str | None:
    """Why no connection could be made (``"connection refused"``, ``"unknown host …"``,
    ``"TLS error …"``, ``"connect timeout"``…), or None when ``exc`` is something else: an
    HTTP answer, a dropped connection, a slow answer."""
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timeout"
    if not isinstance(exc, httpx.ConnectError):
        return None
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:  # httpx wraps the OS's error
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"unknown host: {_short(str(cause.strerror or cause), 80)}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS error: {_short(str(cause.reason or cause), 80)}"
        cause = cause.__cause__ or cause.__context__
    return f"connection failed: {_short(str(exc), 80)}" if str(exc) else "connection failed"


def _retry_after(value: str | None) -> float:
    try:
        return min(60.0, max(0.0, float(value))) if value else 0.0
    except ValueError:
        return 0.0


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
