"""Self-contained reward references: a sample plus its map, as one JSON string.

An RL trainer calls the reward with whatever the dataset row carries (TRL: the row's
columns; verl: ``reward_model.ground_truth``), far from any maptab dataset folder. So the
reference of a sample carries everything the reward reads (``docs/guides/train-with-rewards.md``):

* ``kind`` (a registered task kind with a :class:`~maptab.tasks.RewardSpec`) and, for a kind
  with variants (ReasonMap), ``mode``: the variant (``short``/``long``);
* ``sample``: the dataset row less what scoring never reads (the kind's ``RewardSpec.blank``
  fields: the prompt text, the table row orders, QA parameters);
* ``map`` (kinds whose ``RewardSpec.with_map`` is set: RP and ReasonMap): the map's network
  tables in a compact form — per station
  ``[name, lines, time, price, comfort, reliability, transfer_time]``, per edge
  ``[u, v, line, time, price, comfort, reliability]``, the display labels — which is all
  that route verification, costing and the Mix_tab derivation read (SPEC 1, 2, 5).

``maptab export --format trl|verl`` names the map instead (the default; SPEC 15 exports):
``version`` 2 and ``map_ref`` — ``{"map_id", "digest", "dir"}``, the map's side file
``<dir>/<map_id>.json`` (the compact tables above, written by :func:`map_file_text`) and the
digest of its content. The file is read once per process; the folder is
``$MAPTAB_MAPS_DIR`` when set (an export moved elsewhere), else ``dir``; a file whose content
does not match the digest is refused. Version-1 references (map inline) decode as before.

The JSON text starts with ``{"maptab_reward": "<key>"`` where ``<key>`` is a digest of the
rest: decoding is memoised on that short prefix (and the text's length), so a reference is
decoded and its key checked once per process however many completions are scored against it, and all references of one map share one
:class:`~maptab.core.network.Network` (whose look-up and cost caches the verifier keeps).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maptab.core.network import Edge, Network, NetworkError, Vertex
from maptab.core.schema import RecordError, parse_record
from maptab.core.tables import derive_mix
from maptab.errors import MaptabError
from maptab.tasks.base import RewardSpec, TaskError, TaskKind
from maptab.tasks.base import get as get_kind

__all__ = [
    "MAPS_DIR_ENV",
    "MAP_REF_VERSION",
    "REFERENCE_VERSION",
    "Reference",
    "ReferenceError",
    "all_rewarded",
    "reward_spec",
    "decode_reference",
    "encode_reference",
    "map_file_text",
]

REFERENCE_VERSION = 1
MAP_REF_VERSION = 2  # the map named by ``map_ref``, in a side file
MAPS_DIR_ENV = "MAPTAB_MAPS_DIR"
_HEAD = '{"maptab_reward": "'
_KEY_LEN = 32  # hex characters of the digest
_PREFIX_LEN = len(_HEAD) + _KEY_LEN


class ReferenceError(MaptabError):
    """A reward reference that is not one maptab wrote (or was altered); says which part."""


@dataclass(slots=True)
class Reference:
    """A decoded reference: the sample record and, for kinds rewarded with the map, its map;
    ``mode`` is the sample's variant (ReasonMap ``short``/``long``); ``spec`` the kind's
    :class:`~maptab.tasks.RewardSpec`."""

    kind: str
    record: Any
    network: Network | None = None
    mode: str = ""
    _mix: Network | None = field(default=None, repr=False)
    spec: RewardSpec | None = field(default=None, repr=False, compare=False)

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


def _map_digest(data: Any) -> str:
    """The digest of a map's compact tables (as JSON values), whatever their key order."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def map_file_text(network: Network) -> tuple[str, str]:
    """The side-file text of a map (its compact tables as JSON) and the digest a
    ``map_ref`` records."""
    text = json.dumps(
        compact_network(network), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return text, _map_digest(json.loads(text))


def reward_spec(kind: str, where: str = "") -> tuple[TaskKind, RewardSpec]:
    """The registered kind called ``kind`` and its reward; a :class:`ReferenceError` when
    there is none (``where`` starts the message)."""
    try:
        task = get_kind(kind) if isinstance(kind, str) else None
    except TaskError:
        task = None
    if task is None or task.reward is None:
        rewarded = ", ".join(k.name for k in all_rewarded())
        raise ReferenceError(f"{where}unknown kind {kind!r}; rewarded kinds: {rewarded}")
    return task, task.reward


def all_rewarded() -> list[TaskKind]:
    """The registered kinds that have a reward, in registry order."""
    from maptab.tasks.base import all_kinds

    return [k for k in all_kinds() if k.reward is not None]


def _check_mode(task: TaskKind, mode: str, where: str) -> None:
    if task.samples.variants != ("",) and mode not in task.samples.variants:
        raise ReferenceError(
            f"{where}{task.title} mode must be one of {', '.join(map(repr, task.samples.variants))}, "
            f"not {mode!r}"
        )


def encode_reference(
    kind: str,
    record: Any,
    network: Network | None = None,
    *,
    mode: str = "",
    map_ref: dict[str, str] | None = None,
) -> str:
    """The reference text of one sample (module docstring); deterministic.

    Kinds rewarded with the map (RP, ReasonMap) need ``network`` (inline) or ``map_ref``
    (``{"map_id", "digest", "dir"}`` of its side file, :func:`map_file_text`; wins when
    both are given); ``mode`` (the variant: ReasonMap ``short``/``long``) is for kinds with
    variants.
    """
    task, spec = reward_spec(kind, "")
    _check_mode(task, mode, "")
    if spec.with_map and network is None and map_ref is None:
        raise ReferenceError(f"a {kind} reference needs the map's network")
    sample = record.to_dict()
    for name in spec.blank:
        sample.pop(name, None)
    body: dict[str, Any] = {"version": REFERENCE_VERSION, "kind": kind, "sample": sample}
    if task.samples.variants != ("",):
        body["mode"] = mode
    if spec.with_map and map_ref is not None:
        body["version"] = MAP_REF_VERSION
        body["map_ref"] = {k: str(map_ref[k]) for k in ("map_id", "digest", "dir")}
    elif spec.with_map:
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
    """Run the kind's ``RewardSpec.prepare`` once per reference (RP: verify its first gold
    route, which builds the map's name index and costs the gold, both memoised by the
    verifier, so later calls only cost the answer's own route). A gold answer that does not
    fit its map is reported here, naming the sample."""
    if ref.spec is None or ref.spec.prepare is None:
        return
    try:
        ref.spec.prepare(ref)
    except ValueError as exc:
        raise ReferenceError(f"reward reference {ref.record.id}: {exc}") from None


def _decode(data: dict[str, Any], key: str | None) -> Reference:
    data = {k: v for k, v in data.items() if k != "maptab_reward"}
    version = data.get("version")
    if version not in (REFERENCE_VERSION, MAP_REF_VERSION) or isinstance(version, bool):
        raise ReferenceError(
            f"reward reference: version {version!r}; this maptab reads "
            f"{REFERENCE_VERSION} and {MAP_REF_VERSION}"
        )
    kind = data.get("kind")
    task, spec = reward_spec(kind, "reward reference: ")  # type: ignore[arg-type]
    sample = dict(data.get("sample") or {})
    for name, blank in spec.blank.items():  # scoring does not read them; the schema wants them
        sample.setdefault(name, json.loads(json.dumps(blank)))
    try:
        record = parse_record(task.name, sample)
    except RecordError as exc:
        raise ReferenceError(f"reward reference: sample: {exc}") from None
    mode = str(data.get("mode") or "")
    _check_mode(task, mode, "reward reference: ")
    network = None
    if spec.with_map:
        if version == MAP_REF_VERSION and "map_ref" in data:
            network = _map_of(data["map_ref"])
        elif version == REFERENCE_VERSION and "map" in data:
            digest = _map_digest(data["map"])
            network = _NETWORKS.get(digest)
            if network is None:
                network = _remember(digest, network_from_compact(data["map"]))
        else:
            raise ReferenceError(f"reward reference: a {task.name} sample without its map")
    return Reference(task.name, record, network, mode, spec=spec)


_NETWORKS_SIZE = 4096


def _remember(digest: str, network: Network) -> Network:
    if len(_NETWORKS) >= _NETWORKS_SIZE:  # drop the oldest map
        _NETWORKS.pop(next(iter(_NETWORKS)))
    _NETWORKS[digest] = network
    return network


def _map_of(ref: Any) -> Network:
    """The network a ``map_ref`` names (module docstring), read once per process."""
    try:
        map_id, digest = str(ref["map_id"]), str(ref["digest"])
        recorded = str(ref.get("dir") or "")
    except (KeyError, TypeError, AttributeError):
        raise ReferenceError("reward reference: malformed map_ref") from None
    network = _NETWORKS.get(digest)
    if network is not None:
        return network
    if not map_id or map_id in (".", "..") or any(c in map_id for c in "/\\\0"):
        raise ReferenceError(f"reward reference: map_ref names no map file ({map_id!r})")
    folders = [f for f in (os.environ.get(MAPS_DIR_ENV), recorded) if f]
    tried = []
    for folder in dict.fromkeys(folders):
        path = Path(folder) / f"{map_id}.json"
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            tried.append(f"{path} (missing)")
            continue
        except (OSError, ValueError) as exc:
            tried.append(f"{path} ({type(exc).__name__})")
            continue
        if _map_digest(data) != digest:
            tried.append(f"{path} (another map: content does not match)")
            continue
        return _remember(digest, network_from_compact(data))
    raise ReferenceError(
        f"reward reference: map {map_id!r} not found: {'; '.join(tried) or 'no maps folder'}; "
        f"set {MAPS_DIR_ENV} to the export's maps/ folder"
    )
