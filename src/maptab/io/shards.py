"""Parquet shards written as rows stream in, put into place together at the end.

The dataset exports (Hugging Face, TRL/verl, lmms-eval) write each split as shards
``<name>-NNNNN-of-MMMMM.parquet``. A :class:`ShardWriter` holds one map's rows at a time: the
rows of a map form one row group, and a new shard starts every ``shard_rows`` rows (or once
a shard holds ``shard_bytes`` of rows, counted in memory). Shards are written under
temporary names, ``.<name>-NNNNN.<pid>.parquet.tmp``, since their count is known only at the
end; :func:`publish` renames the shards of a set of writers into place together and removes
the shards an earlier export left in the same folders, so a failed export (each writer's
:meth:`~ShardWriter.abort`) leaves no shard, and an earlier one stays whole until then.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["DICTIONARY_PAGE_BYTES", "SHARD_NAME", "ShardWriter", "publish"]

DICTIONARY_PAGE_BYTES = 1 << 30
"""Default dictionary page limit: large enough that a map's image bytes, repeated on each of
its rows, stay dictionary-encoded (stored once per row group)."""
SHARD_NAME = re.compile(r"^.+-\d{5}-of-\d{5}\.parquet$")
"""The file names :func:`publish` treats as an export's shards."""


class ShardWriter:
    """The shards ``<name>-NNNNN-of-MMMMM.parquet`` of one split in ``out_dir``.

    :meth:`add` a row at a time, rows of one map together: a map's rows form one row group,
    and a new shard starts every ``shard_rows`` rows (``None``: no row limit) or, with
    ``shard_bytes``, before a map's rows that would take the shard's rows (counted in
    memory) over that size. ``dictionary_page_bytes`` is pyarrow's dictionary page limit
    (``None``: pyarrow's default). Then :meth:`close` and :func:`publish`, or :meth:`abort`.
    """

    def __init__(
        self,
        out_dir: str | Path,
        name: str,
        schema: pa.Schema,
        shard_rows: int | None = None,
        *,
        shard_bytes: int | None = None,
        dictionary_page_bytes: int | None = DICTIONARY_PAGE_BYTES,
    ) -> None:
        if shard_rows is not None and shard_rows < 1:
            raise ValueError(f"shard size must be at least 1 row, not {shard_rows}")
        self.out_dir = Path(out_dir).resolve()
        self.name, self.schema = name, schema
        self.shard_rows, self.shard_bytes = shard_rows, shard_bytes
        self.dictionary_page_bytes = dictionary_page_bytes
        self.tmp_paths: list[Path] = []  # the shards written, under temporary names
        self.rows = 0  # rows added so far
        self.batch: list[dict[str, Any]] = []  # the open row group's rows
        self._map_id: str | None = None
        self._writer: pq.ParquetWriter | None = None
        self._in_shard = 0  # rows of the open shard, the batch's included
        self._held = 0  # bytes (in memory) of the rows written to the open shard

    def add(self, map_id: str, row: dict[str, Any]) -> None:
        """Add a row of map ``map_id``; a new map ends the row group of the previous one."""
        if map_id != self._map_id:
            self._flush()
            self._map_id = map_id
        if self._in_shard == self.shard_rows:
            self._flush()
            self._close_shard()
        self.batch.append(row)
        self.rows += 1
        self._in_shard += 1

    def _flush(self) -> None:
        """Write the batch as one row group (opening a shard when none is open)."""
        if not self.batch:
            return
        table = pa.Table.from_pylist(self.batch, schema=self.schema)
        self.batch = []
        if (
            self._writer is not None
            and self.shard_bytes is not None
            and self._held + table.nbytes > self.shard_bytes
        ):
            self._close_shard()
            self._in_shard = table.num_rows
        if self._writer is None:
            tmp = self.out_dir / f".{self.name}-{len(self.tmp_paths):05d}.{os.getpid()}.parquet.tmp"
            self.tmp_paths.append(tmp)
            self._writer = pq.ParquetWriter(
                tmp,
                self.schema,
                compression="zstd",
                dictionary_pagesize_limit=self.dictionary_page_bytes,
            )
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._held += table.nbytes

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._in_shard = self._held = 0

    def close(self) -> None:
        """Write the rows held and close the open shard."""
        self._flush()
        self._close_shard()

    def final_names(self) -> list[Path]:
        """Where :func:`publish` puts the shards, in order."""
        n = len(self.tmp_paths)
        return [self.out_dir / f"{self.name}-{i:05d}-of-{n:05d}.parquet" for i in range(n)]

    def abort(self) -> None:
        """Drop the rows held and remove every shard written (the export failed)."""
        self.batch = []
        if self._writer is not None:
            with contextlib.suppress(Exception):  # failed already; remove what it left
                self._writer.close()
            self._writer = None
        for tmp in self.tmp_paths:
            tmp.unlink(missing_ok=True)


def publish(
    writers: Iterable[ShardWriter],
    *,
    extra: Mapping[Path, Path] | None = None,
    clean: Iterable[str | Path] = (),
) -> None:
    """Put closed writers' shards into place together, with the temporary files or folders
    ``extra`` maps to their places (a folder there is replaced whole); then remove, in the
    writers' folders and the folders ``clean`` names, every file named like a shard
    (:data:`SHARD_NAME`) that these writers did not write: an earlier export's."""
    writers = list(writers)
    final = {
        path: tmp for w in writers for tmp, path in zip(w.tmp_paths, w.final_names(), strict=True)
    }
    replaced: list[Path] = []
    for tmp, place in (extra or {}).items():
        if place.is_dir() and not place.is_symlink():
            old = place.with_name(f".{place.name}.{os.getpid()}.old")
            place.replace(old)
            replaced.append(old)
        tmp.replace(place)
    for path, tmp in sorted(final.items()):
        tmp.replace(path)
    folders = dict.fromkeys([*(w.out_dir for w in writers), *(Path(c).resolve() for c in clean)])
    for folder in folders:
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            if SHARD_NAME.match(p.name) and p not in final and p.is_file():
                p.unlink()
    for old in replaced:
        shutil.rmtree(old, ignore_errors=True)
