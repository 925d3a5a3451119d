"""OpenAI-compatible provider against the loopback server: shape, retries, limits, reasoning."""

from __future__ import annotations

import asyncio
import time

import pytest

from fakeserver import FakeServer, Reply
from maptab.run.openai_provider import OpenAIProvider
from maptab.run.providers import ProviderConfigError, ProviderError, make_provider, split_reasoning
from maptab.run.requests import ChatRequest


def _req(text: str) -> ChatRequest:
    return ChatRequest(text, "qa", [{"role": "user", "content": [{"type": "text", "text": text}]}])


def _ask(provider: OpenAIProvider, *texts: str):
    async def main():
        try:
            return await asyncio.gather(
                *(provider.complete(_req(t)) for t in texts), return_exceptions=True
            )
        finally:
            await provider.aclose()

    return asyncio.run(main())


def _scripted(body, seen):
    key = body["messages"][0]["content"][0]["text"]
    faults = {
        "r429": Reply("status", status=429, headers={"Retry-After": "0"}),
        "r500": Reply("status", status=503),
        "drop": Reply("drop"),
        "bad": Reply("malformed"),
        "slow": Reply(delay=3600),  # never answered in time: the client times out
    }
    if key in faults and seen < 2:
        return faults[key]
    if key == "r400":
        return Reply("status", status=400)
    if key == "always500":
        return Reply("status", status=500)
    return Reply(text=f"<think>plan for {key}</think><answer_begin>{key}<answer_end>")


def test_request_shape_and_defaults(monkeypatch):
    monkeypatch.setenv("MAPTAB_TEST_KEY", "sk-test-123")
    with FakeServer(_scripted) as srv:
        p = OpenAIProvider("vis-model", base_url=srv.base_url, api_key_env="MAPTAB_TEST_KEY")
        req = ChatRequest(
            "x",
            "rp",
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "q"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    ],
                }
            ],
        )

        async def main():
            try:
                return await p.complete(req)
            finally:
                await p.aclose()

        out = asyncio.run(main())
    (got,) = srv.requests
    assert got["path"] == "/v1/chat/completions"
    assert got["headers"]["authorization"] == "Bearer sk-test-123"
    body = got["body"]
    assert body["model"] == "vis-model"
    assert body["temperature"] == 0 and body["max_tokens"] == 2048
    assert body["messages"] == req.messages
    assert "thinking" not in body
    assert out.text == "<answer_begin>q<answer_end>" and out.reasoning == "plan for q"
    assert (out.prompt_tokens, out.completion_tokens) == (11, 7)
    assert "sk-test-123" not in repr(p.settings)


def test_thinking_budget_and_extra_body_are_sent():
    with FakeServer(_scripted) as srv:
        p = OpenAIProvider(
            "m", base_url=srv.base_url, thinking_budget=4096, extra_body={"top_k": 1}, max_tokens=99
        )
        _ask(p, "a")
    body = srv.requests[0]["body"]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["top_k"] == 1 and body["max_tokens"] == 99


@pytest.mark.parametrize(
    "fault", ["r429", "r500", "drop", "bad", pytest.param("slow", marks=pytest.mark.slow)]
)
def test_transient_faults_are_retried(fault):
    with FakeServer(_scripted) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, backoff=0.01, timeout=1.0, max_retries=3)
        (out,) = _ask(p, fault)
    assert not isinstance(out, Exception), out
    assert out.text == f"<answer_begin>{fault}<answer_end>"
    assert p.attempts == 3  # two scripted failures, then the answer
    assert srv.seen[next(iter(srv.seen))] == 3


def test_client_errors_fail_at_once_and_retries_give_up():
    with FakeServer(_scripted) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, backoff=0.01, max_retries=2)
        bad, gone = _ask(p, "r400", "always500")
    assert isinstance(bad, ProviderError) and str(bad).startswith("HTTP 400")
    assert isinstance(gone, ProviderError) and "after 3 attempts" in str(gone)
    assert "HTTP 500" in str(gone)
    assert p.attempts == 1 + 3


def test_backoff_grows_exponentially():
    waits = []
    with FakeServer(lambda body, seen: Reply("status", status=500)) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, backoff=0.05, max_retries=3, seed=1)
        delay = p.retry_delay

        def recorded(attempt, floor=0.0):
            waits.append((attempt, delay(attempt, floor)))
            return waits[-1][1]

        p.retry_delay = recorded
        t0 = time.perf_counter()
        _ask(p, "x")
        elapsed = time.perf_counter() - t0
    # retry n waits 0.05 · 2^n · U[0.5, 1.5], and the run waited at least that long
    assert [a for a, _ in waits] == [0, 1, 2]
    assert all(0.05 * 2**a * 0.5 <= w <= 0.05 * 2**a * 1.5 for a, w in waits), waits
    assert elapsed >= sum(w for _, w in waits)


def test_concurrency_limit_is_respected():
    with FakeServer(lambda body, seen: Reply(hold_until_in_flight=4)) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, concurrency=4)
        outs = _ask(p, *[f"q{i}" for i in range(24)])
    assert all(not isinstance(o, Exception) for o in outs)
    assert srv.max_in_flight == 4


def test_rpm_limiter_spaces_requests():
    with FakeServer() as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, rpm=600, concurrency=8)  # one per 0.1 s
        t0 = time.perf_counter()
        _ask(p, *[f"q{i}" for i in range(5)])
        elapsed = time.perf_counter() - t0
    assert elapsed >= 0.4


def test_missing_key_for_hosted_endpoint(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ProviderConfigError, match="NO_SUCH_KEY_VAR"):
        OpenAIProvider("m", api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(ProviderConfigError, match="unknown model spec"):
        make_provider("gpt-4o")
    assert (
        make_provider(
            "openai:m", base_url="http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY_VAR"
        ).model
        == "m"
    )


def test_vllm_provider_needs_its_extra():
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here; the missing-extra message cannot be checked")
    with pytest.raises(ProviderConfigError, match=r"pip install 'maptab\[vllm\]'"):
        make_provider("vllm:/models/none")


def test_vllm_provider_batches_requests():
    from maptab.run.vllm_provider import VLLMProvider

    class Engine:
        def __init__(self):
            self.batches = []

        def chat(self, convs, params):
            self.batches.append(len(convs))

            class Gen:
                def __init__(self, text):
                    self.text, self.token_ids = text, [1, 2, 3]

            class Out:
                def __init__(self, text):
                    self.outputs, self.prompt_token_ids = [Gen(text)], [0] * 5

            return [Out("<think>t</think>" + c[0]["content"][0]["text"]) for c in convs]

    engine = Engine()
    p = VLLMProvider("local", engine=engine, batch_size=8, batch_wait=0.05)
    outs = _ask(p, *[f"q{i}" for i in range(20)])
    assert [o.text for o in outs] == [f"q{i}" for i in range(20)]
    assert outs[0].reasoning == "t" and outs[0].completion_tokens == 3
    assert engine.batches == [8, 8, 4]


def test_vllm_passes_tools_per_group_and_reads_calls_only_where_offered():
    from maptab.run.vllm_provider import VLLMProvider

    lookup = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    check = {"type": "function", "function": {"name": "check", "parameters": {}}}
    call = '<tool_call>{"name": "lookup", "arguments": {"name": "Beta"}}</tool_call>'

    class Engine:
        def __init__(self):
            self.calls = []

        def chat(self, convs, params, **kw):
            for c in convs:  # one call never mixes conversations offering other tools
                text = c[0]["content"][0]["text"]
                want = {"p": None, "l": [lookup], "c": [check]}[text[0]]
                self.calls.append((text, kw.get("tools") == want))
            if kw.get("tools") == [check]:
                raise RuntimeError("no check today")

            class Gen:
                text, token_ids = call, [1]

            class Out:
                outputs, prompt_token_ids = [Gen()], [0]

            return [Out() for _ in convs]

    engine = Engine()
    p = VLLMProvider("local", engine=engine, batch_size=16, batch_wait=0.2)
    reqs = [_req("plain"), *(_req(f"l{i}") for i in range(3)), _req("c")]
    for r in reqs[1:4]:
        r.tools = [lookup]
    reqs[4].tools = [check]

    async def main():
        try:
            return await asyncio.gather(*(p.complete(r) for r in reqs), return_exceptions=True)
        finally:
            await p.aclose()

    plain, *looked, failed = asyncio.run(main())
    assert sorted(engine.calls) == [
        ("c", True),
        ("l0", True),
        ("l1", True),
        ("l2", True),
        ("plain", True),
    ]
    assert plain.text == call and plain.tool_calls == []  # no tools offered: text as is
    assert all(o.text == "" and [c.name for c in o.tool_calls] == ["lookup"] for o in looked)
    assert looked[0].tool_calls[0].arguments == '{"name": "Beta"}'
    assert isinstance(failed, ProviderError) and "no check today" in str(failed)


@pytest.mark.parametrize(
    ("raw", "answer", "reasoning"),
    [
        ("<think>a</think> B", "B", "a"),
        ("a</think>B", "B", "a"),  # template opened the block in the prompt
        ("<think>cut off", "", "cut off"),
        ("<THINKING>x</THINKING>y<think>z</think>", "y", "x\n\nz"),
        ("plain", "plain", ""),
    ],
)
def test_split_reasoning(raw, answer, reasoning):
    assert split_reasoning(raw) == (answer, reasoning)


def test_key_echoed_by_the_server_is_masked(monkeypatch):
    secret = "sk-echo-9f8e7d6c5b4a"
    monkeypatch.setenv("MAPTAB_ECHO_KEY", secret)

    def echo_key(body, seen):  # a careless proxy that repeats the credential it was sent
        if body["messages"][0]["content"][0]["text"] == "bad":
            return Reply("status", status=401, message=f"invalid key {secret} for this model")
        return Reply(text=f"<think>saw {secret}</think>route uses {secret}")

    with FakeServer(echo_key) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, api_key_env="MAPTAB_ECHO_KEY")
        bad, good = _ask(p, "bad", "good")
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {secret}"
    assert isinstance(bad, ProviderError)
    assert str(bad) == "HTTP 401: invalid key *** for this model"
    assert (good.text, good.reasoning) == ("route uses ***", "saw ***")


def test_short_placeholder_keys_are_not_masked(monkeypatch):
    monkeypatch.setenv("MAPTAB_SHORT_KEY", "x")  # local servers take any key; "x" is no secret
    with FakeServer(lambda body, seen: Reply(text="<answer_begin>x<answer_end>")) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, api_key_env="MAPTAB_SHORT_KEY")
        (out,) = _ask(p, "q")
    assert out.text == "<answer_begin>x<answer_end>"


def test_error_messages_are_one_line_and_name_the_cause():
    with FakeServer(lambda body, seen: Reply("drop")) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, max_retries=0)
        (gone,) = _ask(p, "q")
    assert isinstance(gone, ProviderError)
    assert str(gone).startswith("connection error (RemoteProtocolError: Server disconnected")
    with FakeServer(
        lambda body, seen: Reply("status", status=404, message="no\nsuch  model")
    ) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, max_retries=3)
        (missing,) = _ask(p, "q")
    assert str(missing) == "HTTP 404: no such model"  # not retried, no "Error code" echo


def test_retry_after_is_honoured_as_a_floor():
    def once(body, seen):
        return Reply("status", status=429, headers={"Retry-After": "0.4"}) if seen == 0 else Reply()

    with FakeServer(once) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, backoff=0.001, max_retries=2)
        t0 = time.perf_counter()
        (out,) = _ask(p, "q")
        elapsed = time.perf_counter() - t0
    assert not isinstance(out, Exception) and p.attempts == 2
    assert elapsed >= 0.4


def test_retry_delay_is_jittered_exponential_and_capped():
    p = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", backoff=1.0, max_backoff=5.0, seed=7)
    for attempt in range(12):
        d = p.retry_delay(attempt)
        assert min(5.0, 0.5 * 2**attempt) <= d <= 5.0, (attempt, d)
    assert p.retry_delay(30) <= 5.0  # a long streak never waits past the cap
    assert p.retry_delay(0, floor=30.0) == 30.0  # a server's Retry-After wins
    with pytest.raises(ProviderConfigError, match="--timeout must be positive"):
        OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", timeout=0)


@pytest.mark.parametrize("bad", ["short", "empty"])
def test_vllm_malformed_engine_output_fails_requests_not_the_loop(bad):
    from maptab.run.vllm_provider import VLLMProvider

    class Engine:
        def chat(self, convs, params):
            class Out:
                outputs, prompt_token_ids = [], [0]

            return [] if bad == "short" else [Out() for _ in convs]

    p = VLLMProvider("local", engine=Engine(), batch_size=4, batch_wait=0.01)

    async def main():
        try:
            return await asyncio.wait_for(
                asyncio.gather(
                    *(p.complete(_req(f"q{i}")) for i in range(6)), return_exceptions=True
                ),
                60,
            )
        finally:
            await p.aclose()

    outs = asyncio.run(main())  # a batch task that died would leave this waiting
    assert len(outs) == 6 and all(isinstance(o, ProviderError) for o in outs), outs
    assert all(str(o).startswith("vllm: ") for o in outs)


def test_body_is_the_plain_json_encoding_whatever_the_images():
    import json

    p = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", extra_body={"top_k": 1})
    big = "data:image/png;base64," + "QUJD" * 50_000
    other = 'data:image/png;base64,"odd\\url\u00e9'
    parts = [
        {"type": "text", "text": "question ü"},
        {"type": "image_url", "image_url": {"url": big, "detail": "high"}},
        {"type": "text", "text": "between"},
        {"type": "image_url", "image_url": {"url": other}},
        {"type": "image_url", "image_url": {"url": big}},
    ]
    for messages in (
        [{"role": "user", "content": parts}],
        [{"role": "system", "content": "plain"}, {"role": "user", "content": parts}],
        [{"role": "user", "content": [*parts, {"type": "text", "text": p._token}]}],
        [{"role": "user", "content": [{"type": "text", "text": "no image"}]}],
    ):
        req = ChatRequest("x", "rp", messages)
        plain = {
            "model": "m",
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": 2048,
            "top_k": 1,
        }
        for _ in range(2):  # the second time from the URL cache
            assert p.body(req) == json.dumps(plain, ensure_ascii=False).encode()


def test_gzip_answers_are_decoded():
    with FakeServer(
        lambda body, seen: Reply(text="<answer_begin>zip<answer_end>", gzip=True)
    ) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url)
        (out,) = _ask(p, "q")
    assert not isinstance(out, Exception), out
    assert out.text == "<answer_begin>zip<answer_end>"
    assert "gzip" in srv.requests[0]["headers"]["accept-encoding"]


def test_timeouts_and_refused_connections_are_named():
    with FakeServer(lambda body, seen: Reply(delay=3600)) as srv:  # never answered in time
        p = OpenAIProvider("m", base_url=srv.base_url, timeout=0.1, max_retries=0)
        (slow,) = _ask(p, "q")
    assert isinstance(slow, ProviderError) and str(slow) == "timeout"
    port = srv.port  # nothing listens there any more
    p = OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", backoff=0.01, max_retries=1)
    (refused,) = _ask(p, "q")
    assert isinstance(refused, ProviderError) and p.attempts == 2
    assert str(refused).startswith("connection error (ConnectError: ")
    assert str(refused).endswith("after 2 attempts")


def test_proxy_from_the_environment_is_used(monkeypatch):
    for name in ("http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with FakeServer() as srv:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{srv.port}")
        p = OpenAIProvider("m", base_url="http://models.invalid/v1")
        (out,) = _ask(p, "q")
    assert not isinstance(out, Exception), out
    assert srv.requests[0]["path"] == "http://models.invalid/v1/chat/completions"


def test_bad_base_url_is_a_config_error():
    for url in ("ftp://host/v1", "localhost:8000/v1", "http:///v1"):
        with pytest.raises(ProviderConfigError, match="--base-url: base URL must be http"):
            OpenAIProvider("m", base_url=url)


def test_clients_are_made_on_use_closed_at_the_end_and_left_out_of_pickles():
    import pickle

    with FakeServer(lambda body, seen: Reply(hold_until_in_flight=6)) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, concurrency=6)
        assert p._clients == []
        blob = pickle.dumps(p)

        async def main(provider):
            outs = await asyncio.gather(*(provider.complete(_req(f"q{i}")) for i in range(12)))
            clients = list(provider._clients)
            await provider.aclose()
            return outs, clients

        outs, clients = asyncio.run(main(p))
        assert len(outs) == 12 and clients and all(c.is_closed for c in clients)
        assert p._clients == [] and srv.max_in_flight == 6
        again, _ = asyncio.run(main(pickle.loads(blob)))  # a copy made before use works
    assert [o.text for o in again] == [o.text for o in outs]
