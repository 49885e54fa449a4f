"""File moves and writes that survive a crash, a full disk or a NAS on another filesystem.

Invariants:
- A file appears under its final name only whole: written to a hidden temporary name
  in the same folder, fsynced, then ``os.replace``d, then the folder fsynced.
- ``safe_move`` never deletes a source before its copy is written, fsynced,
  checksum-verified against the source and made read-only (rclone move semantics).
  It works the same across filesystems because it never relies on ``rename`` of the
  source: the copy is always made, so a NAS mount behaves like a local folder.
- Temporary names start with ``.kenang-tmp-`` and end in ``.part``, so neither
  kenang's scanners nor a reader's ``**/*.parquet`` glob can pick one up, and a later
  run sweeps leftovers of a crashed one.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from flows.store import faults
from transforms.errors import ArchiveError, TransientError

TMP_PREFIX = ".kenang-tmp-"
READ_ONLY = 0o444
_CHUNK = 1 << 20

#: errnos that a retry may cure (a NAS blinking, a busy server); others are terminal.
_TRANSIENT_ERRNOS = {errno.EIO, errno.EAGAIN, errno.EBUSY, errno.ETIMEDOUT, errno.ESTALE, errno.EINTR}


def io_error(what: str, exc: OSError) -> Exception:
    """Wrap an OSError as transient or terminal, naming what kenang was doing."""
    cls = TransientError if exc.errno in _TRANSIENT_ERRNOS else ArchiveError
    err = cls(f"{what}: {exc.strerror or exc}")
    err.__cause__ = exc
    return err


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tmp_name(final: Path) -> Path:
    """A hidden sibling name that no reader's glob (*.parquet, *.md) can match."""
    return final.with_name(f"{TMP_PREFIX}{secrets.token_hex(4)}-{final.name}.part")


def atomic_write_bytes(final: Path, data: bytes, mode: int | None = None, *, needs: Path | None = None) -> None:
    """Write data to final whole or not at all."""
    atomic_write(final, lambda tmp: tmp.write_bytes(data), mode, needs=needs)


def _make_folder(folder: Path, needs: Path | None) -> None:
    """Create ``folder`` (and its parents), but only while ``needs`` exists.

    ``needs`` is the archive's marker: a NAS that came unmounted after the run's check
    leaves an empty mount point, and a folder made there would land on the local disk.
    """
    if needs is not None and not needs.is_file():
        raise ArchiveError(f"{needs} is gone (the archive was unmounted during the run?): nothing written there")
    folder.mkdir(parents=True, exist_ok=True)


def atomic_write(final: Path, writer: Callable[[Path], object], mode: int | None = None, *,
                 needs: Path | None = None) -> None:
    """Call writer(tmp) on a temp path beside final, fsync, replace, fsync the folder; ``needs``: see ``_make_folder``."""
    _make_folder(final.parent, needs)
    tmp = tmp_name(final)
    try:
        writer(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(final.parent)


@dataclass(frozen=True)
class Placed:
    """Where safe_copy put a file, and whether an identical copy was already there."""

    path: Path
    sha256: str
    size: int
    existed: bool


def safe_copy(src: Path, dest_dir: Path, name: str, checkpoint_prefix: str = "archive", *,
              needs: Path | None = None) -> Placed:
    """Copy src into dest_dir/name read-only, verified; never overwrite different bytes.

    If dest_dir/name holds identical bytes it is reused (``existed=True``). If it holds
    different bytes, the copy goes to ``<stem>.<sha8><suffix>`` (and so on with a
    counter), so nothing in the archive is ever overwritten. The source is untouched.
    """
    try:
        src_sha, size = _hash_and_size(src)
        return _place(dest_dir, name, src_sha, size, lambda tmp: _copy_fsync(src, tmp), checkpoint_prefix,
                      f"copying {src.name}", "source kept", needs)
    except OSError as exc:
        raise io_error(f"copying {src} to {dest_dir}", exc) from exc


def safe_write(data: bytes, dest_dir: Path, name: str, checkpoint_prefix: str = "archive", *,
               needs: Path | None = None) -> Placed:
    """``safe_copy`` for bytes kenang made (an export's day transcript): same naming, fsync, verify, 0444."""
    try:
        return _place(dest_dir, name, hashlib.sha256(data).hexdigest(), len(data),
                      lambda tmp: _write_fsync(data, tmp), checkpoint_prefix, f"writing {name}", "nothing placed",
                      needs)
    except OSError as exc:
        raise io_error(f"writing {name} to {dest_dir}", exc) from exc


def _place(dest_dir: Path, name: str, sha: str, size: int, fill: Callable[[Path], None], checkpoint_prefix: str,
           what: str, on_mismatch: str, needs: Path | None = None) -> Placed:
    """Fill a temporary file beside the free name for these bytes, verify it, make it 0444, rename it in."""
    _make_folder(dest_dir, needs)
    target = _free_name(dest_dir, name, sha)
    if target.exists():
        return Placed(target, sha, size, existed=True)
    tmp = tmp_name(target)
    try:
        fill(tmp)
        fsync_dir(dest_dir)
        faults.checkpoint(f"{checkpoint_prefix}.copied")
        got = sha256_file(tmp)
        if got != sha:
            raise ArchiveError(f"checksum mismatch {what}: source {sha[:12]}, copy {got[:12]}; {on_mismatch}")
        faults.checkpoint(f"{checkpoint_prefix}.verified")
        os.chmod(tmp, READ_ONLY)
        # The run lock makes kenang the only writer here, and _free_name saw no file
        # at target, so this rename cannot overwrite; rename (not link) also works
        # on SMB mounts without hard links.
        os.rename(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(dest_dir)
    faults.checkpoint(f"{checkpoint_prefix}.placed")
    return Placed(target, sha, size, existed=False)


def _free_name(dest_dir: Path, name: str, sha: str) -> Path:
    """The first name for these bytes: the name itself, or a sha-suffixed variant."""
    stem, dot, suffix = name.partition(".") if not name.startswith(".") else (name, "", "")
    candidates = [name, f"{stem}.{sha[:8]}{dot}{suffix}"]
    candidates += [f"{stem}.{sha[:8]}-{i}{dot}{suffix}" for i in range(2, 1000)]
    for cand in candidates:
        p = dest_dir / cand
        if not p.exists():
            return p
        if p.is_file() and not p.is_symlink() and sha256_file(p) == sha:
            return p
    raise ArchiveError(f"no free archive name for {name} in {dest_dir}")


def _hash_and_size(path: Path) -> tuple[str, int]:
    st = os.stat(path, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise ArchiveError(f"{path} is not a regular file")
    return sha256_file(path), st.st_size


def _copy_fsync(src: Path, dst: Path) -> None:
    with open(src, "rb") as fi, open(dst, "xb") as fo:
        while chunk := fi.read(_CHUNK):
            fo.write(chunk)
        fo.flush()
        os.fsync(fo.fileno())
    st = os.stat(src)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def _write_fsync(data: bytes, dst: Path) -> None:
    with open(dst, "xb") as fo:
        fo.write(data)
        fo.flush()
        os.fsync(fo.fileno())


def remove_source(src: Path, expect_sha: str) -> bool:
    """Delete src only if it still holds the bytes that were archived; returns whether it did."""
    try:
        if src.is_symlink() or not src.exists():
            return False
        if sha256_file(src) != expect_sha:
            # The writer changed it after we archived: keep it, the next run archives the new bytes.
            return False
        src.unlink()
        fsync_dir(src.parent)
        return True
    except OSError as exc:
        raise io_error(f"removing archived source {src}", exc) from exc


def sweep_tmp(root: Path) -> int:
    """Remove temporary files a crashed run left under root; returns how many."""
    n = 0
    if not root.exists():
        return 0
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if f.startswith(TMP_PREFIX):
                Path(dirpath, f).unlink(missing_ok=True)
                n += 1
    return n
