"""Recall packs: one user's whole recall index, ready to search the moment it is opened.

A cold ``kenang recall`` used to read every chunk's terms and embedding from Parquet,
build the BM25 posting list and copy the embeddings into a matrix: about 11 s at 100k
chunks. A pack holds what that produced, made at the end of a run from the user's
compact copies (``flows.store.compact``):

- ``<id>.meta.parquet``: each chunk's ``chunk_id, user_id, date, session_id, source,
  text, flagged, embedder_id``, in the order the reader sorts by;
- ``<id>.kw-{vocab,indptr,postings,weights}.npy``: the posting list
  (``transforms.recall.KeywordIndex.arrays``) and its vocabulary;
- ``<id>.emb.npy``: the embeddings of the pack's embedder as one float32 matrix,
  memory-mapped by readers (rows of another embedder are zeros); absent when no chunk
  has one;
- ``pack.json``, written last and atomically, naming the files, the embedder, the row
  count and each file's sha256.

``<id>`` is a hash of the chunk ids and the embedder, so the same chunks make the same
bytes. Each file is written beside its name and renamed in, so a reader that mapped an
older file keeps reading it.

Freshness is by construction, as for the copies: ``warehouse.drop_compacts`` removes
the user's ``pack.json`` durably before any memory_chunks partition of theirs changes,
so a pack that exists holds exactly the user's chunks. A reader that finds no pack (or
a file of it gone: a run replaced it meanwhile) builds the index the slow way.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from flows.store import compact, faults, warehouse
from flows.store.fsio import atomic_write_bytes, fsync_dir, sha256_file, tmp_name
from transforms.model import USER_ID_RE
from transforms.recall import KeywordIndex

VERSION = 1
META_COLUMNS = ("chunk_id", "user_id", "date", "session_id", "source", "text", "flagged", "embedder_id")
#: The reader's order; a pack is in it, so nothing is sorted at load.
ORDER = "ORDER BY date, source, session_id, seq, chunk_id"


def manifest(wh: Path, user: str) -> Path:
    return warehouse.pack_manifest(wh, user)


def folder(wh: Path, user: str) -> Path:
    return manifest(wh, user).parent


drop = warehouse.drop_pack


@dataclass(frozen=True)
class Pack:
    meta: pa.Table
    keyword: KeywordIndex
    embedder_id: str | None
    embeddings: np.ndarray | None  # (n, dim) float32, memory-mapped; None: no chunk has an embedding


def _info(wh: Path, user: str) -> dict | None:
    """The user's pack.json, or None when there is none (or it cannot be read)."""
    try:
        info = json.loads(manifest(wh, user).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return None
    return info if isinstance(info, dict) else None


def load(wh: Path, user: str) -> Pack | None:
    """The user's pack, or None when there is none (or it was replaced while being opened)."""
    try:
        info = _info(wh, user)
        if info is None or info.get("version") != VERSION:
            return None
        base, files = folder(wh, user), info["files"]
        meta = pq.read_table(base / files["meta"])
        kw = {part: np.load(base / files[f"kw_{part}"], allow_pickle=False)
              for part in ("vocab", "indptr", "postings", "weights")}
        keyword = KeywordIndex.from_arrays({**kw, "vocab_size": info["vocab_size"], "n_docs": info["rows"]})
        emb = np.load(base / files["embeddings"], mmap_mode="r") if files.get("embeddings") else None
    except (FileNotFoundError, ValueError, KeyError, OSError):
        return None
    if meta.num_rows != info["rows"] or keyword.n_docs != info["rows"]:
        return None
    return Pack(meta, keyword, info.get("embedder_id"), emb)


def _chunks(wh: Path, user: str) -> pa.Table:
    cols = ", ".join(dict.fromkeys((*META_COLUMNS, "terms", "tfs", "embedding")))
    return compact.scan(compact.sources(wh, "memory_chunks", user), cols, ORDER)


def contents(wh: Path, user: str) -> Pack | None:
    """What the user's pack holds, made from their chunks now (None: they have none)."""
    if not compact.parts_of(wh, compact.COMPACTS["memory_chunks"], user):
        return None
    tbl = _chunks(wh, user)
    n = tbl.num_rows
    keyword = keyword_index(tbl["terms"].combine_chunks(), tbl["tfs"].combine_chunks())
    ids = [e for e in tbl["embedder_id"].to_pylist() if e]
    embedder = max(set(ids), key=lambda e: (ids.count(e), e)) if ids else None
    matrix = None
    if embedder is not None:
        current = pa.compute.equal(tbl["embedder_id"], embedder).fill_null(False).combine_chunks()
        col = tbl["embedding"].combine_chunks().filter(current)
        dim = len(col[0]) if len(col) else 0
        matrix = np.zeros((n, dim), dtype=np.float32)
        matrix[current.to_numpy(zero_copy_only=False)] = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
    return Pack(tbl.select(list(META_COLUMNS)), keyword, embedder, matrix)


def build(wh: Path, user: str) -> bool:
    """Write the user's pack from their chunks; returns False when they have none (no pack)."""
    pack = contents(wh, user)
    if pack is None:
        drop(wh, user)
        return False
    n = pack.meta.num_rows
    base = folder(wh, user)
    base.mkdir(parents=True, exist_ok=True)
    # Named by what they hold (the chunk ids and the embedder), so the same chunks make the same files.
    key = hashlib.sha256(b"\n".join(c.encode() for c in pack.meta["chunk_id"].to_pylist())
                         + f"\n{pack.embedder_id}\n{VERSION}".encode()).hexdigest()[:16]
    names = {"meta": f"{key}.meta.parquet"}
    _put(base / names["meta"], lambda tmp: pq.write_table(pack.meta, tmp, compression="zstd"))
    arrays = pack.keyword.arrays()
    for part in ("vocab", "indptr", "postings", "weights"):
        names[f"kw_{part}"] = f"{key}.kw-{part}.npy"
        _put(base / names[f"kw_{part}"], lambda tmp, a=arrays[part]: np.save(tmp, a))
    if pack.embeddings is not None:
        names["embeddings"] = f"{key}.emb.npy"
        _put(base / names["embeddings"], lambda tmp: np.save(tmp, pack.embeddings))
    fsync_dir(base)
    faults.checkpoint("recall_pack.files")
    info = {"version": VERSION, "user_id": user, "rows": n, "embedder_id": pack.embedder_id,
            "vocab_size": int(arrays["vocab_size"]), "files": names,
            "sha256": {name: sha256_file(base / name) for name in names.values()}}
    atomic_write_bytes(manifest(wh, user), (json.dumps(info, indent=1, sort_keys=True) + "\n").encode())
    for p in base.iterdir():  # the files of packs this one replaced (a reader that opened them keeps them)
        if p.name != "pack.json" and p.name not in names.values() and not p.name.startswith("."):
            p.unlink(missing_ok=True)
    return True


def _put(path: Path, write) -> None:
    """Write a pack file beside its name, fsync it, rename it in: a reader that mapped the old one keeps it."""
    tmp = tmp_name(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def refresh(wh: Path, users=None, check: bool = False) -> int:
    """Build the pack of every user (or of ``users``) who has chunks and no pack; returns how many.

    With ``check`` (a backfill), a pack whose files are not the bytes it was written with is made again too.
    """
    root = wh / "compact" / "memory_chunks"
    if users is None:
        users = sorted(p.name.removeprefix("user_id=") for p in root.glob("user_id=*")) if root.is_dir() else []
    n = 0
    for user in users:
        if not USER_ID_RE.match(user):
            continue
        if not complete(wh, user) or (check and changed(wh, user)):
            n += build(wh, user)
    return n


def complete(wh: Path, user: str) -> bool:
    """Whether the user has a pack with every file it names (one removed by hand is made again)."""
    info = _info(wh, user)
    try:
        return info is not None and all((folder(wh, user) / name).is_file() for name in info["files"].values())
    except (KeyError, AttributeError, TypeError):
        return False


def changed(wh: Path, user: str) -> list[str]:
    """Files of the user's pack whose bytes differ from the sha256 its manifest holds (``kenang verify``).

    A file that is gone is no problem: like a compact copy, the pack is then simply not
    used, and the next run makes it again."""
    info = _info(wh, user)
    if info is None:
        return []
    base = folder(wh, user)
    out = []
    for name, sha in sorted(info.get("sha256", {}).items()):
        try:
            if sha256_file(base / name) != sha:
                out.append(name)
        except FileNotFoundError:
            continue
    return out


def keyword_index(terms: pa.ListArray, tfs: pa.ListArray) -> KeywordIndex:
    """BM25 postings of chunks given as Arrow list columns (the vocabulary built in Arrow)."""
    encoded = pa.compute.dictionary_encode(terms.flatten())
    return KeywordIndex(
        encoded.dictionary.to_pylist(),
        tfs.flatten().to_numpy(zero_copy_only=False),
        np.diff(terms.offsets.to_numpy()) if len(terms) else np.zeros(0, np.int64),
        term_ids=encoded.indices.to_numpy(zero_copy_only=False),
    )
