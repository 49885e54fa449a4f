"""File moves and writes that survive a crash, a full disk or a NAS on another filesystem.

Invariants:
- A file appears under its final name only whole: written to a hidden temporary name
  in the same folder, fsynced, then ``os.replace``d, then the folder fsynced.
- ``safe_move`` never deletes a source before its copy is written, fsynced,
  checksum-verified against the source and made read-only (rclone move semantics).
  It works the same across filesystems because it never relies on ``rename`` of the
  source: the copy is always made, so a NAS mount behaves like a local folder.
- A file kenang did not write (an agent's log, a file in ``active/``, an export to
  import) is read through ``open_regular``: never through a link, never blocking on
  a pipe, and never at all when it is not a regular file.
- Temporary names start with ``.kenang-tmp-`` and end in ``.part``, so neither
  kenang's scanners nor a reader's ``**/*.parquet`` glob can pick one up, and a later
  run sweeps leftovers of a crashed one.

Durable batches (``durable_batch``): a stage that writes hundreds of derived files
(partitions, summaries, compact copies) makes them durable together, with one
``syncfs`` per filesystem when the batch ends, instead of two fsyncs per file (a
small batch fsyncs its own files then, since a syncfs also flushes whatever else is
waiting to be written on that filesystem). Inside
a batch ``atomic_write`` still writes to a temporary name and renames, so a reader,
or a crashed process, never sees half a file; only the fsyncs wait for the barrier.
The barrier comes before anything that depends on the files: the ledger rows that
record them are written after it, so after a power loss mid-batch the ledger still
names the old state, and the next run redoes those days (a partition that lost its
bytes fails its checksum and is rewritten). Archive copies of originals are never
written this way before their source is deleted: ``archive`` calls ``barrier``
between copying and deleting.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import itertools
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from flows.store import faults
from transforms.errors import ArchiveError, TerminalError, TransientError

TMP_PREFIX = ".kenang-tmp-"
READ_ONLY = 0o444
_CHUNK = 1 << 20
#: A source up to this size is read once, hashed and written from memory; a bigger one is read twice, in chunks.
_IN_MEMORY = 64 << 20
_O_NOATIME = getattr(os, "O_NOATIME", 0)

#: errnos that a retry may cure (a NAS blinking, a busy server); others are terminal.
_TRANSIENT_ERRNOS = {errno.EIO, errno.EAGAIN, errno.EBUSY, errno.ETIMEDOUT, errno.ESTALE, errno.EINTR}


def io_error(what: str, exc: OSError) -> Exception:
    """Wrap an OSError as transient or terminal, naming what kenang was doing."""
    cls = TransientError if exc.errno in _TRANSIENT_ERRNOS else ArchiveError
    err = cls(f"{what}: {exc.strerror or exc}")
    err.__cause__ = exc
    return err


class NotRegular(TerminalError):
    """A path kenang will not read: a link, a pipe, a socket, a device or a folder, or one outside its folder.

    ``what`` says which, in words (``not_regular``), for a reason a user reads.
    """

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def not_regular(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, in words, when it is no regular file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def within(path: str | Path, root: str | Path) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both real paths: no link left in them)."""
    p, r = os.path.normpath(path), os.path.normpath(root)
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)


def open_regular(path: Path, *, inside: Path | None = None, noatime: bool = False):
    """``path`` opened read-only, only if it is a regular file; ``NotRegular`` otherwise.

    Never through a link (``O_NOFOLLOW``) and never blocking on a pipe (``O_NONBLOCK``);
    with ``inside`` (a real path), only when the file opened lies below that folder.
    ``noatime``: leave its access time as it is where the system allows (its owner only).
    A caller that must not even open a device looks with ``os.lstat`` first: this is the
    check that holds when the file is swapped between that look and the open.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(path, flags | (_O_NOATIME if noatime else 0))
        except PermissionError:
            if not (noatime and _O_NOATIME):
                raise
            fd = os.open(path, flags)  # O_NOATIME is for the file's owner only
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # what O_NOFOLLOW answers for a link (Linux, BSD)
            raise NotRegular("a symbolic link") from None
        raise
    try:
        what = not_regular(os.fstat(fd).st_mode)
        if what is None and inside is not None and not within(_opened_path(fd, path), inside):
            what = f"outside {inside}"
        if what is not None:
            raise NotRegular(what)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _opened_path(fd: int, path: Path) -> str:
    """The real path of the file ``fd`` holds: what the kernel opened (Linux), else ``path`` resolved."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def total_size(paths: Iterable[Path]) -> int:
    """The bytes of these files together; one that cannot be looked at (gone, not here) counts 0."""
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except (OSError, ValueError):
            pass
    return total


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- durable batches -------------------------------------------------------------------


@dataclass
class _Batch:
    """What a durable batch wrote and has not synced yet: files and their folders, by device."""

    files: list[Path] = field(default_factory=list)
    folders: dict[Path, int] = field(default_factory=dict)  # folder -> st_dev

    def note(self, path: Path) -> None:
        self.files.append(path)
        self.note_folder(path.parent)

    def note_folder(self, folder: Path) -> None:
        if folder not in self.folders:
            self.folders[folder] = os.stat(folder).st_dev


_batch: ContextVar[_Batch | None] = ContextVar("kenang_durable_batch", default=None)
#: Up to this many files and folders a barrier fsyncs each; more, and one syncfs per filesystem is cheaper.
FSYNC_EACH_UP_TO = 64
_libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: libc's, without a library search
_syncfs = getattr(_libc, "syncfs", None)


@contextmanager
def durable_batch() -> Iterator[None]:
    """Defer the fsyncs of the ``atomic_write``s inside to one barrier when the block ends (see the module docstring).

    Nested batches join the outer one. An exception skips the barrier: the files
    stay as a crash would leave them, and the run fails.
    """
    if _batch.get() is not None:
        yield
        return
    token = _batch.set(_Batch())
    try:
        yield
        barrier()
    finally:
        _batch.reset(token)


def barrier() -> None:
    """Make everything the current durable batch wrote durable now: one ``syncfs`` per filesystem."""
    batch = _batch.get()
    if batch is None or not batch.folders:
        return
    devices: dict[int, Path] = {}
    for folder, dev in batch.folders.items():
        devices.setdefault(dev, folder)
    try:
        if _syncfs is None or len(batch.files) + len(batch.folders) <= FSYNC_EACH_UP_TO:
            # A small batch (a usual night) syncs its own files: a syncfs would also flush whatever
            # else is waiting to be written on that filesystem. Not Linux: this way always.
            for path in [*batch.files, *batch.folders]:
                _fsync_path(path)
        else:
            for folder in devices.values():
                _sync_filesystem(folder)
    except FileNotFoundError:  # a file renamed or removed since: sync the whole filesystems instead
        os.sync()
    batch.files.clear()
    batch.folders.clear()


def _sync_filesystem(folder: Path) -> None:
    assert _syncfs is not None, "barrier syncs whole filesystems only where libc has syncfs"
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(folder))
    finally:
        os.close(fd)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
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
    if not folder.is_dir():  # a stat costs far less than a mkdir that finds the folder there
        folder.mkdir(parents=True, exist_ok=True)


def atomic_write(
    final: Path, writer: Callable[[Path], object], mode: int | None = None, *, needs: Path | None = None
) -> None:
    """Call writer(tmp) on a temp path beside final, fsync, replace, fsync the folder; ``needs``: see ``_make_folder``.

    Inside a ``durable_batch`` the two fsyncs wait for the batch's barrier.
    """
    _make_folder(final.parent, needs)
    tmp = tmp_name(final)
    batch = _batch.get()
    try:
        writer(tmp)
        if batch is None:
            _fsync_path(tmp)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if batch is None:
        fsync_dir(final.parent)
    else:
        batch.note(final)


@dataclass(frozen=True)
class Placed:
    """Where safe_copy put a file, and whether an identical copy was already there."""

    path: Path
    sha256: str
    size: int
    existed: bool


def safe_copy(
    src: Path, dest_dir: Path, name: str, checkpoint_prefix: str = "archive", *, needs: Path | None = None
) -> Placed:
    """Copy src into dest_dir/name read-only, verified; never overwrite different bytes.

    If dest_dir/name holds identical bytes it is reused (``existed=True``). If it holds
    different bytes, the copy goes to ``<stem>.<sha8><suffix>`` (and so on with a
    counter), so nothing in the archive is ever overwritten. The source is untouched.
    """
    staged = stage_copy(src, dest_dir, name, checkpoint_prefix, needs=needs)
    return staged if isinstance(staged, Placed) else commit_copy(staged)


@dataclass(frozen=True)
class Staged:
    """A copy written to a temporary name beside its place, waiting for ``commit_copy``."""

    tmp: Path
    dest_dir: Path
    name: str
    sha256: str
    size: int
    checkpoint_prefix: str
    what: str  # for a checksum mismatch: "copying x.md"
    source: str = ""  # for an I/O error: the source's path
    needs: Path | None = None  # the archive's marker: see ``_make_folder``


def stage_copy(
    src: Path, dest_dir: Path, name: str, checkpoint_prefix: str = "archive", *, needs: Path | None = None
) -> Staged | Placed:
    """The first half of ``safe_copy``: src's bytes in a temporary file in dest_dir (or the identical copy there).

    A source that fits in memory is read once: the bytes hashed are the bytes written.
    ``commit_copy`` still reads the copy back from disk to verify it against that hash.
    Outside a ``durable_batch`` the temporary file is fsynced here; inside one, the
    caller calls ``barrier`` before ``commit_copy``, so a batch of copies costs one sync.
    """
    try:
        sha, size, data, times = _read_source(src)
        _make_folder(dest_dir, needs)
        target = free_name(dest_dir, name, sha)
        if target.exists():
            return Placed(target, sha, size, existed=True)
        tmp = tmp_name(target)
        try:
            _copy(src, tmp, data, times)
            batch = _batch.get()
            if batch is None:
                fsync_dir(dest_dir)
            else:
                batch.note(tmp)
            faults.checkpoint(f"{checkpoint_prefix}.copied")
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return Staged(tmp, dest_dir, name, sha, size, checkpoint_prefix, f"copying {src.name}", str(src), needs)
    except OSError as exc:
        raise io_error(f"copying {src} to {dest_dir}", exc) from exc


def commit_copy(staged: Staged) -> Placed:
    """The second half of ``safe_copy``: verify the temporary file, make it 0444 and give it its free name."""
    try:
        _make_folder(staged.dest_dir, staged.needs)  # the archive may have gone since the copy was staged
        # Another copy of this batch may have taken the name since the copy was staged.
        target = free_name(staged.dest_dir, staged.name, staged.sha256)
        if target.exists():
            staged.tmp.unlink(missing_ok=True)
            return Placed(target, staged.sha256, staged.size, existed=True)
        return _place(staged, target)
    except OSError as exc:
        raise io_error(f"copying {staged.source} to {staged.dest_dir}", exc) from exc


def discard(staged: Iterable[Staged | Placed]) -> None:
    """Remove the temporary files of copies that will not be committed (a batch that failed half-way)."""
    for s in staged:
        if isinstance(s, Staged):
            s.tmp.unlink(missing_ok=True)


def safe_write(
    data: bytes, dest_dir: Path, name: str, checkpoint_prefix: str = "archive", *, needs: Path | None = None
) -> Placed:
    """``safe_copy`` for bytes kenang made (an export's day transcript): same naming, fsync, verify, 0444."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        _make_folder(dest_dir, needs)
        target = free_name(dest_dir, name, sha)
        if target.exists():
            return Placed(target, sha, len(data), existed=True)
        tmp = tmp_name(target)
        try:
            _write_fsync(data, tmp)
            fsync_dir(dest_dir)
            faults.checkpoint(f"{checkpoint_prefix}.copied")
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return _place(
            Staged(tmp, dest_dir, name, sha, len(data), checkpoint_prefix, f"writing {name}"), target, "nothing placed"
        )
    except OSError as exc:
        raise io_error(f"writing {name} to {dest_dir}", exc) from exc


def _place(staged: Staged, target: Path, on_mismatch: str = "source kept") -> Placed:
    """Verify a staged temporary file, make it 0444, rename it to ``target`` (a free name)."""
    tmp = staged.tmp
    try:
        got = sha256_file(tmp)
        if got != staged.sha256:
            raise ArchiveError(
                f"checksum mismatch {staged.what}: source {staged.sha256[:12]}, copy {got[:12]}; {on_mismatch}"
            )
        faults.checkpoint(f"{staged.checkpoint_prefix}.verified")
        os.chmod(tmp, READ_ONLY)
        # The run lock makes kenang the only writer here, and free_name saw no file
        # at target, so this rename cannot overwrite; rename (not link) also works
        # on SMB mounts without hard links.
        os.rename(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    batch = _batch.get()
    if batch is None:
        fsync_dir(staged.dest_dir)
    else:
        batch.note(target)
    faults.checkpoint(f"{staged.checkpoint_prefix}.placed")
    return Placed(target, staged.sha256, staged.size, existed=False)


def free_name(dest_dir: Path, name: str, sha: str) -> Path:
    """The first name for these bytes: the name itself, or a sha-suffixed variant."""
    stem, dot, suffix = name.partition(".") if not name.startswith(".") else (name, "", "")
    candidates = itertools.chain(
        [name, f"{stem}.{sha[:8]}{dot}{suffix}"], (f"{stem}.{sha[:8]}-{i}{dot}{suffix}" for i in range(2, 1000))
    )
    for cand in candidates:
        p = dest_dir / cand
        if not p.exists():
            return p
        if p.is_file() and not p.is_symlink() and sha256_file(p) == sha:
            return p
    raise ArchiveError(f"no free archive name for {name} in {dest_dir}")


def _read_source(path: Path) -> tuple[str, int, bytes | None, tuple[int, int]]:
    """A source's sha256, size, bytes (None when too big to hold: ``_copy`` reads it again) and (atime, mtime) in ns."""
    st = os.stat(path, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise ArchiveError(f"{path} is not a regular file")
    if st.st_size > _IN_MEMORY:
        return sha256_file(path), st.st_size, None, (st.st_atime_ns, st.st_mtime_ns)
    with open(path, "rb", buffering=0) as f:
        data = f.read()
        st = os.fstat(f.fileno())
    return hashlib.sha256(data).hexdigest(), len(data), data, (st.st_atime_ns, st.st_mtime_ns)


def _copy(src: Path, dst: Path, data: bytes | None, times: tuple[int, int]) -> None:
    """Write ``data`` (None: src's bytes, read again) to dst with src's times; fsynced unless a durable batch will sync it."""
    with open(dst, "xb") as fo:
        if data is not None:
            fo.write(data)
        else:
            with open(src, "rb") as fi:
                while chunk := fi.read(_CHUNK):
                    fo.write(chunk)
        fo.flush()
        if _batch.get() is None:
            os.fsync(fo.fileno())
    os.utime(dst, ns=times)


def _write_fsync(data: bytes, dst: Path) -> None:
    with open(dst, "xb") as fo:
        fo.write(data)
        fo.flush()
        os.fsync(fo.fileno())


def remove_source(src: Path, expect_sha: str) -> bool:
    """Delete src only if it still holds the bytes that were archived; returns whether it did."""
    try:
        h = hashlib.sha256()
        try:
            with open_regular(src) as fh:  # a pipe put there since would hang a plain open
                while chunk := fh.read(_CHUNK):
                    h.update(chunk)
        except (FileNotFoundError, NotADirectoryError):  # gone since its copy: nothing to delete
            return False
        except NotRegular:  # swapped for a link, pipe or device since its copy: not what was archived
            return False
        if h.hexdigest() != expect_sha:
            # The writer changed it after we archived: keep it, the next run archives the new bytes.
            return False
        src.unlink()
        batch = _batch.get()
        if batch is None:
            fsync_dir(src.parent)
        else:
            batch.note_folder(src.parent)
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
