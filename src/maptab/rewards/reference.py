"""Self-contained reward references: a sample plus its map, as one JSON string.

An RL trainer calls the reward with whatever the dataset row carries (TRL: the row's
columns; verl: ``reward_model.ground_truth``), far from any maptab dataset folder. So the
reference of a sample carries everything the reward reads (``docs/rewards.md``):

* ``kind`` (``rp``, ``qa``, ``reasonmap``) and, for ReasonMap, ``mode`` (``short``/``long``);
* ``sample``: the dataset row (:class:`~maptab.schema.RPQuery`,
  :class:`~maptab.schema.QAQuery` or :class:`~maptab.schema.ReasonMapQuestion` fields) less
  what scoring never reads (the prompt text, the table row orders, QA parameters);
* ``map`` (RP and ReasonMap): the map's network tables in a compact form — per station
  ``[name, lines, time, price, comfort, reliability, transfer_time]``, per edge
  ``[u, v, line, time, price, comfort, reliability]``, the display labels — which is all
  that route verification, costing and the Mix_tab derivation read (SPEC 1, 2, 5).

The JSON text starts with ``{"maptab_reward": "<key>"`` where ``<key>`` is a digest of the
rest: decoding is memoised on that short prefix (and the text's length), so a reference is
decoded and its key checked once per process however many completions are scored against it, and all references of one map share one
:class:`~maptab.network.Network` (whose look-up and cost caches the verifier keeps).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from maptab.errors import MaptabError
from maptab.network import Edge, Network, NetworkError, Vertex
from maptab.schema import (
    QAQuery,
    ReasonMapQuestion,
    RecordError,
    RPQuery,
    parse_record,
)
from maptab.tables import derive_mix

__all__ = [
    "REFERENCE_VERSION",
    "Reference",
    "ReferenceError",
    "decode_reference",
    "encode_reference",
]

REFERENCE_VERSION = 1
_HEAD = '{"maptab_reward": "'
_KEY_LEN = 32  # hex characters of the digest
_PREFIX_LEN = len(_HEAD) + _KEY_LEN
# fields scoring never reads (they are most of a row's size)
_DROP = {"rp": ("question", "tables"), "qa": ("question", "tables", "params"), "reasonmap": ()}


class ReferenceError(MaptabError):
    """A reward reference that is not one maptab wrote (or was altered); says which part."""


@dataclass(slots=True)
class Reference:
    """A decoded reference: the sample record and, for RP and ReasonMap, its map."""

    kind: str
    record: RPQuery | QAQuery | ReasonMapQuestion
    network: Network | None = None
    mode: str = ""
    _mix: Network | None = field(default=None, repr=False)

    @property
    def mix(self) -> Network:
        """The Mix_tab network of the map (SPEC 5), derived once."""
        if self._mix is None:
            assert self.network is not None
            net = self.network
            self._mix = _MIX.get(id(net))
            if self._mix is None or _MIX_OF.get(id(net)) is not net:
                self._mix = net.with_attributes(vertices=derive_mix(net))
                _MIX[id(net)], _MIX_OF[id(net)] = self._mix, net
        return self._mix


_MIX: dict[int, Network] = {}
_MIX_OF: dict[int, Network] = {}


def compact_network(network: Network) -> dict[str, Any]:
    """The network tables in the compact form described in the module docstring."""
    return {
        "scenario": network.scenario,
        "map_id": network.map_id,
        "labels": dict(sorted(network.labels.items())),
        "v": [
            [v.name, list(v.lines), v.time, v.price, v.comfort, v.reliability, v.transfer_time]
            for v in network.vertices.values()
        ],
        "e": [[e.u, e.v, e.line, e.time, e.price, e.comfort, e.reliability] for e in network.edges],
    }


def network_from_compact(data: Any) -> Network:
    """Inverse of :func:`compact_network`; raises :class:`ReferenceError` when malformed."""
    try:
        vertices = {
            str(r[0]): Vertex(str(r[0]), tuple(map(str, r[1])), *map(float, r[2:7]))
            for r in data["v"]
        }
        edges = [
            Edge(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), *map(float, r[3:7]))
            for r in data["e"]
        ]
        return Network(
            data["scenario"],
            vertices,
            edges,
            map_id=str(data.get("map_id", "")),
            labels={str(k): str(v) for k, v in dict(data.get("labels") or {}).items()},
        )
    except (KeyError, TypeError, ValueError, IndexError, NetworkError) as exc:
        raise ReferenceError(f"reward reference: malformed map tables ({exc})") from None


def encode_reference(
    kind: str,
    record: RPQuery | QAQuery | ReasonMapQuestion,
    network: Network | None = None,
    *,
    mode: str = "",
) -> str:
    """The reference text of one sample (module docstring); deterministic.

    ``network`` is required for ``rp`` and ``reasonmap``; ``mode`` (``short``/``long``) for
    ``reasonmap``.
    """
    if kind not in _DROP:
        raise ReferenceError(f"unknown sample kind {kind!r}; expected rp, qa or reasonmap")
    if kind == "reasonmap" and mode not in ("short", "long"):
        raise ReferenceError(f"ReasonMap mode must be 'short' or 'long', not {mode!r}")
    if kind != "qa" and network is None:
        raise ReferenceError(f"a {kind} reference needs the map's network")
    sample = record.to_dict()
    for name in _DROP[kind]:
        sample.pop(name, None)
    body: dict[str, Any] = {"version": REFERENCE_VERSION, "kind": kind, "sample": sample}
    if kind == "reasonmap":
        body["mode"] = mode
    if kind != "qa":
        assert network is not None
        body["map"] = compact_network(network)
    text = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    key = hashlib.blake2b(text.encode("utf-8"), digest_size=_KEY_LEN // 2).hexdigest()
    return f'{_HEAD}{key}", {text[1:]}'


_CACHE: dict[str, tuple[int, Reference]] = {}  # key prefix -> (text length, reference)
_CACHE_SIZE = 1 << 18
_NETWORKS: dict[str, Network] = {}  # map digest -> network (shared by a map's references)


def decode_reference(text: str | bytes | dict[str, Any]) -> Reference:
    """The :class:`Reference` of a text written by :func:`encode_reference` (memoised).

    Also accepts the decoded JSON object (a trainer may hand the column over as a dict).
    Raises :class:`ReferenceError` naming what is wrong.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if isinstance(text, dict):  # not memoised: a dict has no key to find it by
        ref = _decode(text, None)
        _prepare(ref)
        return ref
    if not isinstance(text, str):
        raise ReferenceError(f"reward reference: expected a JSON string, got {type(text).__name__}")
    prefix = text[:_PREFIX_LEN] if text.startswith(_HEAD) else text
    hit = _CACHE.get(prefix)
    if hit is not None and hit[0] == len(text):
        return hit[1]
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReferenceError(f"reward reference: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReferenceError("reward reference: expected a JSON object")
    key = data.pop("maptab_reward", None)
    if text.startswith(_HEAD):
        body = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        digest = hashlib.blake2b(body.encode("utf-8"), digest_size=_KEY_LEN // 2).hexdigest()
        if digest != key:
            raise ReferenceError("reward reference: content does not match its key (edited?)")
    ref = _decode(data, key)
    _prepare(ref)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[prefix] = (len(text), ref)
    return ref


def _prepare(ref: Reference) -> None:
    """Do once per reference what every reward call on it would otherwise start with: for
    RP, verify its first gold route (builds the map's name index and costs the gold, both
    memoised by the verifier), so later calls only cost the answer's own route. A gold
    route that does not fit its map is reported here, naming the sample."""
    if not isinstance(ref.record, RPQuery):
        return
    from maptab.rewards.core import rp_reward  # core does not import this module

    mix = ref.mix if ref.record.category == "map_mix" else None
    assert ref.network is not None
    try:
        rp_reward(f"<route_begin>{ref.record.routes[0]}<route_end>", ref.record, ref.network, mix)
    except ValueError as exc:
        raise ReferenceError(f"reward reference {ref.record.id}: {exc}") from None


def _decode(data: dict[str, Any], key: str | None) -> Reference:
    data = {k: v for k, v in data.items() if k != "maptab_reward"}
    version = data.get("version")
    if version != REFERENCE_VERSION:
        raise ReferenceError(
            f"reward reference: version {version!r}; this maptab reads {REFERENCE_VERSION}"
        )
    kind = data.get("kind")
    if kind not in _DROP:
        raise ReferenceError(f"reward reference: unknown kind {kind!r}")
    sample = dict(data.get("sample") or {})
    for name in _DROP[kind]:  # scoring does not read them; the schema wants them present
        sample.setdefault(name, {} if name in ("tables", "params") else "")
    try:
        record = parse_record(kind, sample)
    except RecordError as exc:
        raise ReferenceError(f"reward reference: sample: {exc}") from None
    mode = str(data.get("mode") or "")
    if kind == "reasonmap" and mode not in ("short", "long"):
        raise ReferenceError(f"reward reference: ReasonMap mode {mode!r}")
    network = None
    if kind != "qa":
        if "map" not in data:
            raise ReferenceError(f"reward reference: a {kind} sample without its map")
        map_key = json.dumps(data["map"], sort_keys=True, separators=(",", ":"))
        digest = hashlib.blake2b(map_key.encode("utf-8"), digest_size=16).hexdigest()
        network = _NETWORKS.get(digest)
        if network is None:
            network = network_from_compact(data["map"])
            if len(_NETWORKS) > 4096:
                _NETWORKS.clear()
            _NETWORKS[digest] = network
    return Reference(kind, record, network, mode)
