"""Is the archive really there? A marker file, checked before anything moves.

The worst case for a tool that deletes originals is an unmounted NAS: the mount point
is an empty local folder, kenang archives onto the local disk, deletes the originals,
and when the mount comes back the archive lacks them. So:

- ``kenang init`` writes ``<archive>/.kenang-archive``, holding this home's id
  (``<home>/.kenang-id``). It is the only place that ever creates the archive root,
  and once the home has archived files it writes no marker where there was none
  (``--claim-archive`` does): that folder is the mount point, not the archive.
- Every run checks the marker first (``check``). No marker: the archive is *not
  mounted*. A marker naming another home: it is *foreign*. Either way nothing is read
  from it or written to it. An archive that refuses a write is *read_only*; one with
  less free space than the night needs plus ``limits.archive_min_free_mb`` is *full*.
  Both are still read (loads go on), never written (nothing archived, no summary).
- A run on a degraded archive deletes no original and says so; the CLI exits 3.

An archive on S3 (``flows.store.remote``) has its marker as an object in the bucket, and
its local copy has one too. A bucket that cannot be reached is *unreachable*: the local
copy is still read (loads go on), nothing is archived and no original is deleted.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import secrets
from dataclasses import dataclass

from flows.config import Settings, home_id
from transforms.errors import ConfigError

MARKER = ".kenang-archive"


@dataclass(frozen=True)
class ArchiveState:
    state: str  # ok | not_mounted | foreign | read_only | full | unreachable
    reason: str | None = None

    @property
    def writable(self) -> bool:
        return self.state == "ok"

    @property
    def readable(self) -> bool:
        return self.state in ("ok", "read_only", "full", "unreachable")

    def as_dict(self) -> dict:
        return {"state": self.state, "reason": self.reason}


def claim(settings: Settings, force: bool = False) -> str:
    """Create the archive root if need be and write its marker; returns what was done.

    A marker of another home is kept unless ``force`` (``kenang init --claim-archive``):
    two homes writing one archive would each adopt the other's files. Nor is a folder
    without a marker claimed (``"unmarked"``) once this home has archived files: it is
    the empty mount point of a NAS that is not mounted, and a marker there would let the
    nights archive onto the local disk.
    """
    root, me = settings.paths.archive, home_id(settings.paths)
    if me is None:
        raise ConfigError(f"{settings.paths.home} has no home id; run `kenang init --home {settings.paths.home}`")
    body = {
        "kenang_archive": 1,
        "home_id": me,
        "home": str(settings.paths.home),
        "claimed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    marker = root / MARKER
    current = _read_marker(marker)
    if settings.paths.remote_archive:  # the bucket's marker decides; the local copy's follows it
        from flows.store import remote

        there = remote.read_marker(settings)
        mine = there is not None and there.get("home_id") == me
        if there is not None and not mine and not force:
            return "foreign"
        if not mine:
            remote.write_marker(settings, body)
        keep = there if there is not None and mine else body
        if current != keep:
            root.mkdir(parents=True, exist_ok=True)
            _write_marker(root, keep)
        return "kept" if mine else ("claimed" if there is None else "reclaimed")
    if current is not None and current.get("home_id") == me:
        return "kept"
    if current is not None and not force:
        return "foreign"
    if current is None and not force and _holds_records(settings):
        return "unmarked"
    root.mkdir(parents=True, exist_ok=True)
    _write_marker(root, body)
    return "claimed" if current is None else "reclaimed"


def _holds_records(settings: Settings) -> bool:
    """This home has archived files already, so an archive folder without a marker is an empty mount point."""
    from flows.store import warehouse
    from schemas.tables import ARCHIVE_FILES

    return warehouse.has_files(settings.paths.warehouse, ARCHIVE_FILES)


def _write_marker(root, body: dict) -> None:
    tmp = root / f".kenang-tmp-{secrets.token_hex(4)}-{MARKER}.part"
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, root / MARKER)


def check(settings: Settings, need_bytes: int = 0, *, probe: bool = True) -> ArchiveState:
    """The archive's state for a run that will write ``need_bytes`` into it.

    ``probe`` creates and removes an empty temporary file to learn whether the archive
    takes writes; read-only commands (``status``, ``verify``) pass False and learn only
    what the marker and the free space say.
    """
    if settings.paths.remote_archive:
        there = bucket_state(settings)
        if there.state == "unreachable":  # the local copy is read while the bucket is away, never written
            local = _check_local(settings, 0, probe=False)
            return there if local.readable else local
        if not there.writable:
            return there
        if not probe and not (settings.paths.archive / MARKER).is_file():
            return there  # a local copy not filled yet (the next run fills it); the bucket is what is checked
    return _check_local(settings, need_bytes, probe=probe)


def bucket_state(settings: Settings) -> ArchiveState:
    """The bucket's marker names this home; see ``flows.store.remote``."""
    from flows.store import remote
    from transforms.errors import ArchiveError, ArchiveUnreachable

    url = settings.paths.remote_archive
    try:
        marker = remote.read_marker(settings)
    except ArchiveUnreachable as exc:
        return ArchiveState(
            "unreachable",
            (
                f"the archive {url} cannot be reached ({exc}): nothing was archived and no original was deleted; "
                f"days already in the local copy still load. The next run catches up."
            ),
        )
    except ArchiveError as exc:
        return ArchiveState(
            "unreachable",
            (
                f"the archive {url} refused kenang ({exc}): check the credentials in the environment and the bucket's "
                f"policy. Nothing was archived and no original was deleted; days already in the local copy still load."
            ),
        )
    if marker is None:
        return ArchiveState(
            "not_mounted",
            (
                f"{url} holds no {MARKER} marker object (a wrong bucket or prefix, or never set up): nothing was "
                f"archived and no original was deleted. For a new, empty bucket run `kenang init` once."
            ),
        )
    if marker.get("home_id") != home_id(settings.paths):
        return ArchiveState(
            "foreign",
            (
                f"the archive {url} belongs to another kenang home ({marker.get('home', '?')}); nothing was "
                f"archived. If this home was restored or moved, run `kenang init --claim-archive`."
            ),
        )
    return ArchiveState("ok")


def _check_local(settings: Settings, need_bytes: int, *, probe: bool) -> ArchiveState:
    root = settings.paths.archive
    marker = _read_marker(root / MARKER)
    if marker is None:
        return ArchiveState(
            "not_mounted",
            (
                f"{root} holds no {MARKER} marker, so the archive is not mounted (or was never set up): "
                f"nothing was archived and no original was deleted. Mount it and rerun; for a new, empty "
                f"archive run `kenang init` once."
            ),
        )
    me = home_id(settings.paths)
    if me is None or marker.get("home_id") != me:
        return ArchiveState(
            "foreign",
            (
                f"the archive {root} belongs to another kenang home ({marker.get('home', '?')}); nothing was "
                f"archived. If this home was restored or moved, run `kenang init --claim-archive`."
            ),
        )
    if probe:
        refused = _write_probe(root)
        if refused is not None and refused.errno == errno.ENOSPC:
            return _full(settings, 0, need_bytes)
        if refused is not None:
            return ArchiveState(
                "read_only",
                (
                    f"the archive {root} refuses writes ({refused.strerror}): nothing was archived and no "
                    f"original was deleted; days already archived still load."
                ),
            )
    st = os.statvfs(root)
    free = st.f_bavail * st.f_frsize
    margin = int(settings.limits.archive_min_free_mb * 2**20)
    if free < need_bytes + margin:
        return _full(settings, free, need_bytes)
    return ArchiveState("ok")


def _write_probe(root) -> OSError | None:
    """Create and remove an empty file in ``root``; the error if the archive refused it."""
    probe = root / f".kenang-tmp-probe-{secrets.token_hex(4)}.part"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as exc:
        try:
            probe.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only filesystem refuses even this
        return exc
    return None


def _full(settings: Settings, free: int, need: int) -> ArchiveState:
    limit = settings.limits.archive_min_free_mb
    return ArchiveState(
        "full",
        (
            f"the archive {settings.paths.archive} is full ({free / 2**20:.0f} MiB free; tonight needs "
            f"{need / 2**20:.1f} MiB plus limits.archive_min_free_mb={limit}): nothing was archived and no "
            f"original was deleted."
        ),
    )


def _read_marker(path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else {}
