"""The archive on S3-compatible object storage: ``paths.archive: s3://bucket/prefix``.

Every stage reads and writes the archive as a folder, so an S3 archive has a local
copy (``paths.archive_cache``) laid out exactly like a local or NAS archive, and the
bucket is where it is kept. The copy is a cache: removed, it is filled again from the
bucket. Four moves, each through fsspec's ``s3fs``; endpoint, region and credentials
come from the environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...) or the
standard AWS config files, never from kenang.yaml:

- ``check``: the bucket's marker object (``<prefix>/.kenang-archive``) names this home,
  as a local archive's marker file does (``flows.store.mount``).
- ``pull``, before a run reads the archive: every object the local copy lacks is
  downloaded, checked against the sha256 it was uploaded with and made read-only. A
  backfill with the local copy and the warehouse gone works from the bucket alone.
- ``confirm``, before any source is deleted: the batch's originals and their day
  manifests are uploaded (an original with ``If-None-Match: *`` after a look at the
  key: identical bytes already there are recognised, other bytes are never
  overwritten), read back and compared by sha256, and locked where the bucket has
  object lock. Only the originals confirmed this way have their sources deleted; the
  rest stay in ``active/`` for the next night.
- ``push``, when a run ends: what else the run changed in the copy (summaries,
  manifests, MEMORY_INDEX), the same way; a derived file replaces the object, and its
  older versions are deleted, so a forgotten phrase does not live on in a version.
- ``delete`` (``forget --purge``, ``retention.archive_days``): every version of the
  key, past governance-mode retention. A key that cannot be deleted now stays listed
  in the state file and is deleted at the next push; ``pull`` never brings it back.

A bucket that cannot be reached raises ``ArchiveUnreachable``: nothing is uploaded and
no source is deleted, and the night goes on with the local copy. The state file,
``<archive_cache>/.kenang-remote.json``, records each file's size, mtime and sha256 as
uploaded, so an unchanged file is not read again, and the keys still to delete.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from flows.config import Settings
from flows.store import faults
from flows.store.fsio import READ_ONLY, TMP_PREFIX, atomic_write_bytes, sha256_file, tmp_name
from schemas.config import s3_url
from transforms.errors import ArchiveError, ArchiveUnreachable

STATE = ".kenang-remote.json"
MARKER = ".kenang-archive"  # flows.store.mount.MARKER: the same name in the bucket and in the copy
DAILY, IMPORTS = "daily_sessions", "imports"
_CHUNK = 8 << 20
#: Seconds to connect, and to wait for an answer; botocore's standard retry mode retries 5xx and throttling.
CONNECT_TIMEOUT_S, READ_TIMEOUT_S, ATTEMPTS = 5, 60, 3


def is_original(rel: str) -> bool:
    """Originals are never overwritten and are locked; summaries, manifests and indexes are derived."""
    name = rel.rsplit("/", 1)[-1]
    if name.startswith(".") or name.endswith(".summary.md"):
        return False
    return rel.startswith(f"{DAILY}/") or rel.startswith(f"{IMPORTS}/")


# --- the bucket ----------------------------------------------------------------------

_fs_cache: dict[tuple, object] = {}


def _filesystem():
    """One s3fs filesystem per endpoint and credentials in the environment (a test starts several servers)."""
    import s3fs

    key = tuple(os.environ.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID",
                                            "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"))
    fs = _fs_cache.get(key)
    if fs is None:
        fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False, config_kwargs={
            "connect_timeout": CONNECT_TIMEOUT_S, "read_timeout": READ_TIMEOUT_S,
            "retries": {"max_attempts": ATTEMPTS, "mode": "standard"}})
        _fs_cache[key] = fs
    return fs


def _unreachable_errors() -> tuple[type[BaseException], ...]:
    import aiohttp
    from botocore.exceptions import BotoCoreError

    return OSError, BotoCoreError, aiohttp.ClientError, asyncio.TimeoutError


def s3_error(exc: BaseException) -> tuple[str | None, int | None]:
    """(error code, HTTP status) of the S3 answer behind an error s3fs translated, if there was one."""
    seen = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict) and "Error" in response:
            return (response["Error"].get("Code"), (response.get("ResponseMetadata") or {}).get("HTTPStatusCode"))
        seen = seen.__cause__ or seen.__context__
    return None, None


@dataclass
class Bucket:
    url: str
    bucket: str
    prefix: str
    fs: object = field(repr=False)
    _lock: tuple[bool, bool] | None = field(default=None, repr=False)
    _versioned: bool | None = field(default=None, repr=False)

    def key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def rel(self, key: str) -> str:
        return key[len(self.prefix) + 1:] if self.prefix else key

    def where(self, rel: str) -> str:
        return f"s3://{self.bucket}/{self.key(rel)}"

    def call(self, what: str, method: str, **kwargs) -> dict:
        """One S3 API call; FileNotFoundError and FileExistsError pass through, a refusal is an ArchiveError,
        anything else (no connection, a timeout, a 5xx after botocore's retries) is ArchiveUnreachable."""
        try:
            return self.fs.call_s3(method, Bucket=self.bucket, **kwargs)
        except (FileNotFoundError, FileExistsError):
            raise
        except PermissionError as exc:
            raise ArchiveError(f"{what}: the bucket refused ({exc})") from exc
        except _unreachable_errors() as exc:
            raise self._failed(what, exc) from exc

    def _failed(self, what: str, exc: BaseException) -> Exception:
        """A 4xx answer (but a timeout or throttling) is a refusal; anything else, the bucket is unreachable now."""
        code, status = s3_error(exc)
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            return ArchiveError(f"{what}: the bucket refused ({code or status}: {exc})")
        return ArchiveUnreachable(f"{what}: s3://{self.bucket} cannot be reached ({type(exc).__name__}: {exc})")

    def head(self, rel: str) -> dict | None:
        try:
            return self.call(f"looking at {self.where(rel)}", "head_object", Key=self.key(rel))
        except FileNotFoundError:
            return None

    def list(self) -> dict[str, int]:
        """rel -> size of every object under the prefix."""
        out: dict[str, int] = {}
        kwargs = {"Prefix": f"{self.prefix}/" if self.prefix else ""}
        while True:
            try:
                page = self.call(f"listing s3://{self.bucket}/{self.prefix}", "list_objects_v2", **kwargs)
            except FileNotFoundError as exc:
                raise ArchiveUnreachable(f"s3://{self.bucket} does not exist") from exc
            for obj in page.get("Contents") or []:
                out[self.rel(obj["Key"])] = obj["Size"]
            if not page.get("IsTruncated"):
                return out
            kwargs["ContinuationToken"] = page["NextContinuationToken"]

    def read(self, rel: str) -> bytes:
        try:
            return self.fs.cat_file(f"{self.bucket}/{self.key(rel)}")
        except FileNotFoundError:
            raise
        except PermissionError as exc:
            raise ArchiveError(f"reading {self.where(rel)}: the bucket refused ({exc})") from exc
        except _unreachable_errors() as exc:
            raise self._failed(f"reading {self.where(rel)}", exc) from exc

    def stream_to(self, rel: str, sink) -> tuple[str, int]:
        """Read an object in chunks into ``sink`` (a file, or None); returns (sha256, size)."""
        h, n = hashlib.sha256(), 0
        try:
            with self.fs.open(f"{self.bucket}/{self.key(rel)}", "rb", block_size=_CHUNK, cache_type="none") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
                    n += len(chunk)
                    if sink is not None:
                        sink.write(chunk)
        except FileNotFoundError:
            raise
        except PermissionError as exc:
            raise ArchiveError(f"reading {self.where(rel)}: the bucket refused ({exc})") from exc
        except _unreachable_errors() as exc:
            raise self._failed(f"reading {self.where(rel)}", exc) from exc
        return h.hexdigest(), n

    def lock(self) -> tuple[bool, bool]:
        """(object lock enabled, a default retention rule set on the bucket)."""
        if self._lock is None:
            try:
                conf = self.call("reading the bucket's object lock", "get_object_lock_configuration")
                c = conf.get("ObjectLockConfiguration") or {}
                self._lock = (c.get("ObjectLockEnabled") == "Enabled", bool(c.get("Rule")))
            except (FileNotFoundError, ArchiveError):
                self._lock = (False, False)  # no configuration (or a server without the API): no object lock
        return self._lock

    def versioned(self) -> bool:
        if self._versioned is None:
            got = self.call("reading the bucket's versioning", "get_bucket_versioning")
            self._versioned = got.get("Status") in ("Enabled", "Suspended")
        return self._versioned

    def put(self, rel: str, local: Path, sha: str, size: int, *, original: bool, lock_days: int) -> bool:
        """Upload, read back and compare; returns False when identical bytes were there already.

        An original goes in only where its key is free (looked at, then ``If-None-Match``);
        a key holding other bytes is never overwritten. A derived file replaces its object,
        and the older versions of it are deleted.
        """
        where = self.where(rel)
        if original:
            there = self.head(rel)
            if there is not None:
                theirs = (there.get("Metadata") or {}).get("sha256") or self.stream_to(rel, None)[0]
                if theirs == sha:
                    return False
                raise ArchiveError(f"{where} holds other bytes ({theirs[:12]}) than the archive's {rel} "
                                   f"({sha[:12]}): nothing was overwritten, and its source is kept")
        extra: dict = {}
        if original:
            extra["IfNoneMatch"] = "*"
            enabled, has_rule = self.lock()
            if enabled and not has_rule and lock_days:
                extra["ObjectLockMode"] = "GOVERNANCE"
                extra["ObjectLockRetainUntilDate"] = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=lock_days)
        with open(local, "rb") as f:
            body = f.read()
            mode = os.fstat(f.fileno()).st_mode & 0o777
        if hashlib.sha256(body).hexdigest() != sha:
            raise ArchiveError(f"{local} changed while it was being uploaded; it is uploaded at the next push")
        try:
            self.call(f"uploading {where}", "put_object", Key=self.key(rel), Body=body, Metadata={"sha256": sha, "mode": f"{mode:o}"},
                      **extra)
        except FileExistsError:  # another writer took the key since the look: compare again
            return self.put(rel, local, sha, size, original=original, lock_days=lock_days)
        faults.checkpoint("remote.uploaded")
        got, n = self.stream_to(rel, None)
        if got != sha or n != size:
            raise ArchiveError(f"read back {where}: sha256 {got[:12]}, {n} bytes; the archive's copy has "
                               f"{sha[:12]}, {size} bytes")
        if not original and self.versioned():
            self.delete(rel, keep_latest=True)
        return True

    def delete(self, rel: str, *, keep_latest: bool = False) -> int:
        """Delete every version (and delete marker) of the key, or every version but the newest."""
        key = self.key(rel)
        found = self.call(f"listing the versions of {self.where(rel)}", "list_object_versions", Prefix=key)
        versions = [v for v in (found.get("Versions") or []) + (found.get("DeleteMarkers") or []) if v["Key"] == key]
        if not versions and not keep_latest:
            try:
                self.call(f"deleting {self.where(rel)}", "delete_object", Key=key)
            except FileNotFoundError:
                pass
            return 0
        n = 0
        for v in versions:
            if keep_latest and v.get("IsLatest"):
                continue
            try:
                self.call(f"deleting {self.where(rel)}", "delete_object", Key=key, VersionId=v["VersionId"],
                          BypassGovernanceRetention=True)
            except FileNotFoundError:
                pass
            n += 1
        return n


def bucket(settings: Settings) -> Bucket | None:
    """The archive's bucket, or None for a local archive."""
    url = settings.paths.remote_archive
    if not url:
        return None
    name, prefix = s3_url(url)
    return Bucket(url, name, prefix, _filesystem())


# --- what the bucket holds, as this copy knows it ----------------------------------------


@dataclass
class State:
    files: dict[str, list] = field(default_factory=dict)  # rel -> [size, mtime_ns, sha256] as uploaded
    deletes: list[str] = field(default_factory=list)  # keys purged here, not yet deleted in the bucket

    @classmethod
    def read(cls, cache: Path) -> State:
        try:
            data = json.loads((cache / STATE).read_text(encoding="utf-8"))
            return cls(dict(data.get("files") or {}), list(data.get("deletes") or []))
        except (OSError, ValueError, AttributeError):
            return cls()  # lost or unreadable: every file is looked at again in the bucket, nothing is re-sent blindly

    def write(self, cache: Path) -> None:
        data = {"kenang_remote": 1, "files": dict(sorted(self.files.items())), "deletes": sorted(set(self.deletes))}
        atomic_write_bytes(cache / STATE, (json.dumps(data, indent=0, sort_keys=True) + "\n").encode())


def _local_files(cache: Path) -> list[str]:
    """Every file of the copy that belongs in the bucket (not the marker, the state or a temporary)."""
    out = []
    for dirpath, dirs, files in os.walk(cache):
        dirs[:] = [d for d in dirs if not d.startswith(TMP_PREFIX)]
        for f in files:
            if f.startswith(TMP_PREFIX):
                continue
            rel = Path(dirpath, f).relative_to(cache).as_posix()
            if rel not in (STATE, MARKER):
                out.append(rel)
    return sorted(out)


@dataclass
class SyncResult:
    pulled: int = 0
    pushed: int = 0
    recognised: int = 0
    deleted: int = 0
    confirmed: frozenset = frozenset()  # rels in the bucket with the copy's bytes
    failed: tuple = ()  # (rel, why)
    error: str | None = None  # the bucket could not be reached: what was left for the next run

    def counts(self) -> dict:
        return {"pulled": self.pulled, "pushed": self.pushed, "recognised": self.recognised, "deleted": self.deleted,
                "failed": [list(f) for f in self.failed], "error": self.error}


def pull(settings: Settings) -> SyncResult:
    """Download every object the local copy lacks (not keys waiting to be deleted); each verified, 0444."""
    b = bucket(settings)
    if b is None:
        return SyncResult()
    cache = settings.paths.archive
    state = State.read(cache)
    n, failed = 0, []
    try:
        there = b.list()
        if MARKER in there and not (cache / MARKER).is_file():  # a copy made anew: its marker comes first
            atomic_write_bytes(cache / MARKER, b.read(MARKER))
        for rel, size in sorted(there.items()):
            if rel in (MARKER, STATE) or rel in state.deletes or TMP_PREFIX in rel or os.path.lexists(cache / rel):
                continue
            if rel in state.files and not is_original(rel):
                continue  # a derived file kenang removed here since it went up: the next push deletes it there
            try:
                state.files[rel] = _download(b, rel, cache / rel)
                n += 1
            except ArchiveError as exc:
                failed.append((rel, str(exc)))
    except ArchiveUnreachable as exc:
        return SyncResult(pulled=n, failed=tuple(failed), error=str(exc))
    finally:
        if n:
            state.write(cache)
    return SyncResult(pulled=n, failed=tuple(failed))


def _download(b: Bucket, rel: str, dest: Path) -> list:
    head = b.head(rel) or {}
    want = (head.get("Metadata") or {}).get("sha256")
    try:
        mode = int((head.get("Metadata") or {}).get("mode") or "444", 8) & 0o777
    except ValueError:
        mode = READ_ONLY
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(dest)
    try:
        with open(tmp, "xb") as f:
            sha, size = b.stream_to(rel, f)
            f.flush()
            os.fsync(f.fileno())
        if want and want != sha:
            raise ArchiveError(f"{b.where(rel)} reads back as sha256 {sha[:12]}, but was uploaded as {want[:12]}; "
                               "not copied down")
        os.chmod(tmp, mode)  # as it was in the copy it came from: originals and summaries 0444
        os.rename(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    st = os.stat(dest)
    return [st.st_size, st.st_mtime_ns, sha]


def confirm(settings: Settings, rels: Iterable[str], *, with_manifests: bool = True) -> SyncResult:
    """Upload the given files of the copy, then their day folders' manifests; which are now safely in the bucket.

    A local archive confirms everything: its copies were made durable before this is asked.
    """
    rels = sorted(set(rels))
    if bucket(settings) is None:
        return SyncResult(confirmed=frozenset(rels))
    extra = sorted({r.rsplit("/", 1)[0] + "/.kenang-files.json" for r in rels if r.startswith(f"{DAILY}/")}) \
        if with_manifests else []
    cache = settings.paths.archive
    return push(settings, rels + [r for r in extra if (cache / r).is_file()])


def push(settings: Settings, rels: Iterable[str] | None = None) -> SyncResult:
    """Upload what changed in the copy (or only ``rels``), after the deletes still owed; see the module docstring."""
    b = bucket(settings)
    if b is None:
        return SyncResult()
    cache = settings.paths.archive
    state = State.read(cache)
    lock_days = _lock_days(settings)
    pushed = recognised = deleted = 0
    confirmed, failed = set(), []
    dirty = False
    try:
        for rel in list(state.deletes):
            try:
                b.delete(rel)
            except ArchiveError as exc:  # under a retention the bucket enforces (compliance mode): owed still
                failed.append((rel, str(exc)))
                continue
            deleted += 1
            state.deletes.remove(rel)
            state.files.pop(rel, None)
            dirty = True
        if rels is None:  # derived files kenang removed from the copy go from the bucket too (never originals)
            here = set(_local_files(cache))
            for rel in sorted(r for r in state.files if r not in here and not is_original(r)):
                try:
                    b.delete(rel)
                except ArchiveError as exc:
                    failed.append((rel, str(exc)))
                    continue
                deleted += 1
                state.files.pop(rel)
                dirty = True
        for rel in (list(dict.fromkeys(rels)) if rels is not None else sorted(here)):
            path = cache / rel
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            known = state.files.get(rel)
            if known and known[0] == st.st_size and known[1] == st.st_mtime_ns:
                confirmed.add(rel)
                continue
            sha = sha256_file(path)
            if not (known and known[2] == sha):
                try:
                    if b.put(rel, path, sha, st.st_size, original=is_original(rel), lock_days=lock_days):
                        pushed += 1
                    else:
                        recognised += 1
                except ArchiveError as exc:
                    failed.append((rel, str(exc)))
                    continue
            state.files[rel] = [st.st_size, st.st_mtime_ns, sha]
            confirmed.add(rel)
            dirty = True
    except ArchiveUnreachable as exc:
        return SyncResult(pushed=pushed, recognised=recognised, deleted=deleted, confirmed=frozenset(confirmed),
                          failed=tuple(failed), error=str(exc))
    finally:
        if dirty:
            state.write(cache)
    return SyncResult(pushed=pushed, recognised=recognised, deleted=deleted, confirmed=frozenset(confirmed),
                      failed=tuple(failed))


def _lock_days(settings: Settings) -> int:
    days = settings.retention.archive_lock_days
    if days and settings.retention.archive_days:
        days = min(days, settings.retention.archive_days)
    return days


def delete(settings: Settings, rels: Iterable[str]) -> SyncResult:
    """Delete purged files from the bucket, every version; what cannot go now is owed, and retried at each push."""
    b = bucket(settings)
    rels = sorted(set(rels))
    if b is None or not rels:
        return SyncResult()
    cache = settings.paths.archive
    state = State.read(cache)
    state.deletes = sorted(set(state.deletes) | set(rels))
    state.write(cache)  # owed before it is tried: a crash now still deletes them at the next push
    return push(settings, [])


def owed(settings: Settings) -> list[str]:
    """Keys purged here that the bucket still holds (a delete the bucket refused or could not take yet)."""
    return State.read(settings.paths.archive).deletes if settings.paths.remote_archive else []


# --- the marker, and the checks of verify ------------------------------------------------


def read_marker(settings: Settings) -> dict | None:
    """The bucket's marker (None: there is none); ArchiveUnreachable / ArchiveError when it cannot be read."""
    b = bucket(settings)
    try:
        data = json.loads(b.read(MARKER))
    except FileNotFoundError:
        return None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def write_marker(settings: Settings, body: dict) -> None:
    b = bucket(settings)
    b.call(f"writing {b.where(MARKER)}", "put_object", Key=b.key(MARKER),
           Body=(json.dumps(body, indent=2) + "\n").encode())


def lock_summary(settings: Settings) -> str:
    """One line for status and the README's claim: whether the bucket locks what kenang uploads."""
    b = bucket(settings)
    enabled, has_rule = b.lock()
    if not enabled:
        return "no object lock on this bucket: originals are protected by kenang's no-overwrite rule alone"
    if has_rule:
        return "object lock on, with the bucket's default retention"
    days = _lock_days(settings)
    return f"object lock on: each original is kept in governance mode for {days} days" if days else \
        "object lock on, but retention.archive_lock_days is 0 and the bucket has no default retention"


@dataclass(frozen=True)
class RemoteCheck:
    checked: int = 0
    missing: tuple = ()  # recorded originals the bucket lacks
    changed: tuple = ()  # recorded originals whose bytes in the bucket differ from the record
    unrecorded: tuple = ()  # originals in the bucket no record knows
    not_uploaded: tuple = ()  # files of the copy not in the bucket yet (the next run uploads them)
    purged_still_there: tuple = ()  # purged here, owed to the bucket
    error: str | None = None

    @property
    def problems(self) -> int:
        return len(self.missing) + len(self.changed) + len(self.unrecorded) + int(self.error is not None)


def verify(settings: Settings, recorded: dict[str, str], purged: set[str]) -> RemoteCheck | None:
    """Re-read every recorded original in the bucket and compare its sha256; list what the bucket lacks."""
    b = bucket(settings)
    if b is None:
        return None
    cache = settings.paths.archive
    state = State.read(cache)
    try:
        there = b.list()
        missing, changed = [], []
        for rel, sha in sorted(recorded.items()):
            if rel not in there:
                missing.append(rel)
            elif b.stream_to(rel, None)[0] != sha:
                changed.append(rel)
        originals = {r for r in there if is_original(r)}
        unrecorded = sorted(originals - set(recorded) - purged)
        waiting = []
        for rel in _local_files(cache):
            known = state.files.get(rel)
            if rel not in there or known is None or sha256_file(cache / rel) != known[2]:
                waiting.append(rel)
        return RemoteCheck(len(recorded), tuple(missing), tuple(changed), tuple(unrecorded), tuple(waiting),
                           tuple(sorted(set(state.deletes) & set(there))))
    except ArchiveUnreachable as exc:
        return RemoteCheck(error=str(exc))
