"""The archive on S3-compatible object storage: ``paths.archive: s3://bucket/prefix``.

Every stage reads and writes the archive as a folder, so an S3 archive has a local
copy (``paths.archive_cache``) laid out exactly like a local or NAS archive, and the
bucket is where it is kept. The copy is a cache: removed, it is filled again from the
bucket. Everything goes through fsspec's ``s3fs``; endpoint, region and credentials
come from the environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...) or the
standard AWS config files, never from kenang.yaml. Nothing here writes to a bucket
whose marker object does not name this home (``ours``).

- ``pull``, before a run reads the archive: every object the local copy lacks is
  downloaded, checked against the sha256 it was uploaded with (its
  ``x-amz-meta-sha256``) and given the mode it had. An object the state says was
  uploaded but the bucket no longer lists is forgotten by the state, so the next push
  uploads it again. A key purged here (``purge_log``) is never pulled back: it is owed
  a delete instead. A backfill with the local copy and the warehouse gone works from
  the bucket alone.
- ``confirm``, before any source is deleted: the batch's originals, then their day
  manifests, are uploaded (an original only where its key is free: looked at first,
  then ``If-None-Match: *``; identical bytes already there are read back and
  recognised, other bytes are never overwritten), read back and compared by sha256,
  and locked where the bucket has object lock. Only the originals confirmed this way
  have their sources deleted; the rest stay in ``active/`` for the next night.
- ``push``, when a run ends: the deletes owed, then whatever else the run changed in
  the copy (summaries, manifests, MEMORY_INDEX), the same way. A derived file replaces
  its object and its older versions are deleted, so a forgotten phrase does not live
  on in a version; a version the bucket will not delete yet is owed too.
- ``owe`` then ``settle`` (``forget --purge``, ``retention.archive_days``, a forgotten
  day's summary): the key is written to the owed list before the local file goes, then
  every version of it is deleted, past governance-mode retention. What cannot go now
  (the bucket away, compliance-mode retention) stays owed and is retried at every push.

A bucket that cannot be reached raises ``ArchiveUnreachable`` (no connection, a
timeout, 5xx or throttling after botocore's retries); one that answers with a refusal
(4xx) raises ``ArchiveError``. Either way nothing is deleted that the bucket has not
confirmed. The state file, ``<archive_cache>/.kenang-remote.json``, names its bucket
and records each file's size, mtime and sha256 as uploaded (so an unchanged file is
not read again) and the deletes owed.
"""

from __future__ import annotations

import asyncio
import builtins
import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.config import Settings, home_id
from flows.store import faults
from flows.store.fsio import READ_ONLY, TMP_PREFIX, atomic_write_bytes, fsync_dir, sha256_file, tmp_name
from schemas.config import s3_url
from transforms.errors import ArchiveError, ArchiveUnreachable
from transforms.vault import DAILY, IMPORTS

STATE = ".kenang-remote.json"
MARKER = ".kenang-archive"  # flows.store.mount.MARKER: the same name in the bucket and in the copy
MANIFEST = ".kenang-files.json"
_CHUNK = 8 << 20
#: Seconds to connect, and to wait for an answer; botocore's standard retry mode retries 5xx and throttling.
CONNECT_TIMEOUT_S, READ_TIMEOUT_S, ATTEMPTS = 5, 60, 3


def is_original(rel: str) -> bool:
    """Originals are never overwritten and are locked; summaries, manifests and indexes are derived."""
    name = rel.rsplit("/", 1)[-1]
    if name.startswith(".") or name.endswith(".summary.md"):
        return False
    return rel.startswith(f"{DAILY}/") or rel.startswith(f"{IMPORTS}/")


def _safe_rel(rel: str) -> bool:
    """A key kenang may hold in its copy: no folder object, no empty, '.' or '..' part, no absolute path."""
    return (
        bool(rel)
        and not rel.endswith("/")
        and not rel.startswith("/")
        and all(part not in ("", ".", "..") for part in rel.split("/"))
    )


# --- the bucket ----------------------------------------------------------------------

_fs_cache: dict[str, object] = {}


def _filesystem():
    """One s3fs filesystem per endpoint and credentials in the environment (rotated keys get a new one)."""
    import s3fs

    names = (
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    )
    key = hashlib.sha256("\0".join(os.environ.get(k, "") for k in names).encode()).hexdigest()
    fs = _fs_cache.get(key)
    if fs is None:
        fs = s3fs.S3FileSystem(
            skip_instance_cache=True,
            use_listings_cache=False,
            config_kwargs={
                "connect_timeout": CONNECT_TIMEOUT_S,
                "read_timeout": READ_TIMEOUT_S,
                "retries": {"max_attempts": ATTEMPTS, "mode": "standard"},
            },
        )
        _fs_cache.clear()  # one at a time: an old key's client is not kept
        _fs_cache[key] = fs
    return fs


def _remote_errors() -> tuple[type[BaseException], ...]:
    import aiohttp
    from botocore.exceptions import BotoCoreError

    return OSError, BotoCoreError, aiohttp.ClientError, asyncio.TimeoutError


def s3_error(exc: BaseException) -> tuple[str | None, int | None]:
    """(error code, HTTP status) of the S3 answer behind an error s3fs translated, if there was one."""
    seen: BaseException | None = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict) and "Error" in response:
            return (response["Error"].get("Code"), (response.get("ResponseMetadata") or {}).get("HTTPStatusCode"))
        seen = seen.__cause__ or seen.__context__
    return None, None


class _NotFound(Exception):
    """An object that is not there (kept apart from a local FileNotFoundError)."""


@dataclass
class Bucket:
    url: str
    bucket: str
    prefix: str
    fs: Any = field(repr=False)  # an s3fs.S3FileSystem; s3fs ships no types
    _lock: tuple[bool, bool] | None = field(default=None, repr=False)
    _versioned: bool | None = field(default=None, repr=False)

    def key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def rel(self, key: str) -> str:
        return key[len(self.prefix) + 1 :] if self.prefix else key

    def where(self, rel: str) -> str:
        return f"s3://{self.bucket}/{self.key(rel)}"

    def failed(self, what: str, exc: BaseException) -> Exception:
        """A refusal (4xx but a timeout or throttling; 501, an API the server lacks; a request botocore
        rejects) is an ArchiveError; anything else means the bucket cannot be reached now."""
        from botocore.exceptions import ParamValidationError

        code, status = s3_error(exc)
        if (
            isinstance(exc, (PermissionError, ParamValidationError))
            or status == 501
            or (status is not None and 400 <= status < 500 and status not in (408, 429))
        ):
            return ArchiveError(f"{what}: the bucket refused ({code or status or type(exc).__name__}: {exc})")
        return ArchiveUnreachable(f"{what}: s3://{self.bucket} cannot be reached ({type(exc).__name__}: {exc})")

    def call(self, what: str, method: str, **kwargs) -> dict:
        """One S3 API call; a missing object or bucket is ``_NotFound``, a taken key FileExistsError."""
        try:
            return self.fs.call_s3(method, Bucket=self.bucket, **kwargs)
        except FileNotFoundError as exc:
            raise _NotFound(str(exc)) from exc
        except FileExistsError:
            raise
        except _remote_errors() as exc:
            raise self.failed(what, exc) from exc

    def head(self, rel: str) -> dict | None:
        try:
            return self.call(f"looking at {self.where(rel)}", "head_object", Key=self.key(rel))
        except _NotFound:
            return None

    def list(self) -> dict[str, int]:
        """rel -> size of every object under the prefix."""
        out: dict[str, int] = {}
        kwargs = {"Prefix": f"{self.prefix}/" if self.prefix else ""}
        while True:
            try:
                page = self.call(f"listing s3://{self.bucket}/{self.prefix}", "list_objects_v2", **kwargs)
            except _NotFound as exc:
                raise ArchiveError(f"s3://{self.bucket} does not exist") from exc
            for obj in page.get("Contents") or []:
                out[self.rel(obj["Key"])] = obj["Size"]
            if not page.get("IsTruncated"):
                return out
            kwargs["ContinuationToken"] = page["NextContinuationToken"]

    def read(self, rel: str) -> bytes:
        """A small object whole (the marker); ``_NotFound`` when it is not there."""
        try:
            return self.fs.cat_file(f"{self.bucket}/{self.key(rel)}")
        except FileNotFoundError as exc:
            raise _NotFound(str(exc)) from exc
        except _remote_errors() as exc:
            raise self.failed(f"reading {self.where(rel)}", exc) from exc

    def stream_to(self, rel: str, sink=None) -> tuple[str, int]:
        """Read an object in chunks (into ``sink``, a local file, if given); returns (sha256, size).

        Only the bucket's errors are wrapped: a local disk that is full raises its own OSError.
        """
        h, n = hashlib.sha256(), 0
        try:
            f = self.fs.open(f"{self.bucket}/{self.key(rel)}", "rb", block_size=_CHUNK, cache_type="none")
        except FileNotFoundError as exc:
            raise _NotFound(str(exc)) from exc
        except _remote_errors() as exc:
            raise self.failed(f"reading {self.where(rel)}", exc) from exc
        with f:
            while True:
                try:
                    chunk = f.read(_CHUNK)
                except FileNotFoundError as exc:
                    raise _NotFound(str(exc)) from exc
                except _remote_errors() as exc:
                    raise self.failed(f"reading {self.where(rel)}", exc) from exc
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
                if sink is not None:
                    sink.write(chunk)
        return h.hexdigest(), n

    def lock(self) -> tuple[bool, bool]:
        """(object lock enabled, a default retention rule set on the bucket)."""
        if self._lock is None:
            try:
                conf = self.call("reading the bucket's object lock", "get_object_lock_configuration")
                c = conf.get("ObjectLockConfiguration") or {}
                self._lock = (c.get("ObjectLockEnabled") == "Enabled", bool(c.get("Rule")))
            except (_NotFound, ArchiveError):
                self._lock = (False, False)  # no configuration, or a server without the API: no object lock
        return self._lock

    def versioned(self) -> bool:
        if self._versioned is None:
            try:
                got = self.call("reading the bucket's versioning", "get_bucket_versioning")
                self._versioned = got.get("Status") in ("Enabled", "Suspended")
            except (_NotFound, ArchiveError):
                self._versioned = False  # a server without versioning
        return self._versioned

    def put(self, rel: str, local: Path, sha: str, size: int, *, original: bool, lock_days: int) -> bool:
        """Upload, read back and compare; returns False when identical bytes were there already.

        An original goes in only where its key is free (looked at, then ``If-None-Match``);
        a key holding other bytes is never overwritten, and bytes already there count
        only once read back. A derived file replaces its object; its older versions are
        deleted by the caller (``_drop_old``).
        """
        where = self.where(rel)
        with open(local, "rb") as f:
            body = f.read()
            mode = os.fstat(f.fileno()).st_mode & 0o777
        if hashlib.sha256(body).hexdigest() != sha:
            raise ArchiveError(f"{local} changed while it was being uploaded; it is uploaded at the next push")
        extra: dict = {}
        if original:
            if self.head(rel) is not None:
                return self._same(rel, sha, size)
            extra["IfNoneMatch"] = "*"
            enabled, has_rule = self.lock()
            if enabled and not has_rule and lock_days:
                extra["ObjectLockMode"] = "GOVERNANCE"
                extra["ObjectLockRetainUntilDate"] = dt.datetime.now(dt.UTC) + dt.timedelta(days=lock_days)
        try:
            try:
                self.call(
                    f"uploading {where}",
                    "put_object",
                    Key=self.key(rel),
                    Body=body,
                    Metadata={"sha256": sha, "mode": f"{mode:o}"},
                    **extra,
                )
            except ArchiveError as exc:
                if s3_error(exc)[1] != 501 or "IfNoneMatch" not in extra:  # the status of the answer behind it
                    raise
                # A server without conditional writes: the key was looked at just now, under the run lock.
                extra.pop("IfNoneMatch")
                self.call(
                    f"uploading {where}",
                    "put_object",
                    Key=self.key(rel),
                    Body=body,
                    Metadata={"sha256": sha, "mode": f"{mode:o}"},
                    **extra,
                )
        except FileExistsError:  # another writer took the key between the look and the upload
            return self._same(rel, sha, size)
        faults.checkpoint("remote.uploaded")
        self._same(rel, sha, size)
        return True

    def _same(self, rel: str, sha: str, size: int) -> bool:
        """The object holds exactly these bytes (read back whole), else ArchiveError; returns False."""
        try:
            got, n = self.stream_to(rel)
        except _NotFound as exc:
            raise ArchiveError(f"read back {self.where(rel)}: not there after its upload") from exc
        if got != sha or n != size:
            raise ArchiveError(
                f"{self.where(rel)} holds other bytes (sha256 {got[:12]}, {n} bytes) than the "
                f"archive's {rel} ({sha[:12]}, {size} bytes): nothing was overwritten, and its "
                f"source is kept"
            )
        return False

    def versions(self, rel: str) -> builtins.list[dict]:  # ``list`` here is the method above
        """Every version and delete marker of exactly this key, all pages."""
        key, out = self.key(rel), []
        kwargs: dict = {"Prefix": key}
        while True:
            page = self.call(f"listing the versions of {self.where(rel)}", "list_object_versions", **kwargs)
            out += [v for v in (page.get("Versions") or []) + (page.get("DeleteMarkers") or []) if v["Key"] == key]
            if not page.get("IsTruncated"):
                return out
            kwargs = {
                "Prefix": key,
                "KeyMarker": page.get("NextKeyMarker"),
                "VersionIdMarker": page.get("NextVersionIdMarker"),
            }

    def delete(self, rel: str, *, keep_latest: bool = False) -> None:
        """Delete every version (and delete marker) of the key, or every version but the newest."""
        key = self.key(rel)
        if not self.versioned():
            if not keep_latest:
                try:
                    self.call(f"deleting {self.where(rel)}", "delete_object", Key=key)
                except _NotFound:
                    pass
            return
        for v in self.versions(rel):
            if keep_latest and v.get("IsLatest"):
                continue
            try:
                self.call(
                    f"deleting {self.where(rel)}",
                    "delete_object",
                    Key=key,
                    VersionId=v["VersionId"],
                    BypassGovernanceRetention=True,
                )
            except _NotFound:
                pass


def bucket(settings: Settings) -> Bucket | None:
    """The archive's bucket, or None for a local archive."""
    url = settings.paths.remote_archive
    parsed = s3_url(url) if url else None
    if url is None or parsed is None:  # settings name a remote archive only for a URL s3_url reads
        return None
    name, prefix = parsed
    return Bucket(url, name, prefix, _filesystem())


def _the_bucket(settings: Settings) -> Bucket:
    """The archive's bucket, for the callers that checked ``settings.paths.remote_archive`` first."""
    b = bucket(settings)
    if b is None:
        raise ArchiveError(f"{settings.paths.archive} is a local archive, not a bucket")
    return b


def ours(settings: Settings, b: Bucket) -> None:
    """Raise ArchiveError unless the bucket's marker names this home: nothing is written to another home's."""
    try:
        marker = json.loads(b.read(MARKER))
    except _NotFound:
        raise ArchiveError(f"{b.url} holds no {MARKER} marker object: nothing is written there") from None
    except ValueError:
        marker = {}
    if not isinstance(marker, dict) or marker.get("home_id") != home_id(settings.paths):
        raise ArchiveError(
            f"{b.url} belongs to another kenang home: nothing is written there "
            f"(`kenang init --claim-archive` takes it over)"
        )


# --- what the bucket holds, as this copy knows it ----------------------------------------


@dataclass
class State:
    url: str
    files: dict[str, list] = field(default_factory=dict)  # rel -> [size, mtime_ns, sha256] as uploaded
    deletes: list[str] = field(default_factory=list)  # keys purged here, every version still to delete
    old_versions: list[str] = field(default_factory=list)  # derived keys whose older versions are still to delete

    @classmethod
    def read(cls, cache: Path, url: str) -> State:
        """The copy's record of its bucket; another bucket's record, or none, is a new one (every file is
        looked at in the bucket again, nothing is taken on trust)."""
        try:
            data = json.loads((cache / STATE).read_text(encoding="utf-8"))
            if data.get("url") != url:
                return cls(url)
            return cls(
                url,
                dict(data.get("files") or {}),
                list(data.get("deletes") or []),
                list(data.get("old_versions") or []),
            )
        except (OSError, ValueError, AttributeError):
            return cls(url)

    def write(self, cache: Path) -> None:
        data = {
            "kenang_remote": 1,
            "url": self.url,
            "files": dict(sorted(self.files.items())),
            "deletes": sorted(set(self.deletes)),
            "old_versions": sorted(set(self.old_versions)),
        }
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
    failed: tuple = ()  # (rel, why): refused by the bucket, or not what it should be; the rest went on
    ignored: tuple = ()  # keys in the bucket kenang will not copy down (a folder object, a '..' in the name)
    error: str | None = None  # the bucket could not be reached, or is not this home's: nothing more was done

    def counts(self) -> dict:
        return {
            "pulled": self.pulled,
            "pushed": self.pushed,
            "recognised": self.recognised,
            "deleted": self.deleted,
            "failed": [list(f) for f in self.failed],
            "ignored": list(self.ignored),
            "error": self.error,
        }

    @property
    def why(self) -> str | None:
        return self.error or ("; ".join(why for _, why in self.failed) or None)


def pull(settings: Settings, purged: Mapping[str, set[str]] | None = None) -> SyncResult:
    """Download what the local copy lacks (see the module docstring); ``purged``: path -> sha256s of purge_log."""
    b = bucket(settings)
    if b is None:
        return SyncResult()
    purged = purged or {}
    cache = settings.paths.archive
    n, failed, ignored = 0, [], []
    try:
        ours(settings, b)
        state = State.read(cache, b.url)
        there = b.list()
    except (ArchiveUnreachable, ArchiveError) as exc:
        return SyncResult(error=str(exc))
    dirty = False
    for rel in [r for r in state.files if r not in there]:  # gone from the bucket: uploaded again at the next push
        state.files.pop(rel)
        dirty = True
    try:
        if not (cache / MARKER).is_file():  # a copy made anew: its marker comes first
            atomic_write_bytes(cache / MARKER, b.read(MARKER))
        for rel in sorted(there):
            if rel in (MARKER, STATE) or rel in state.deletes or TMP_PREFIX in rel:
                continue
            if not _safe_rel(rel) or not (cache / rel).resolve().is_relative_to(cache.resolve()):
                ignored.append(rel)
                continue
            if rel in purged:  # purged here, its delete lost (a crash, a lost copy): owed, never pulled back
                theirs = ((b.head(rel) or {}).get("Metadata") or {}).get("sha256")
                if theirs is None or theirs in purged[rel]:
                    state.deletes.append(rel)
                    dirty = True
                    continue
            if os.path.lexists(cache / rel):
                continue
            try:
                state.files[rel] = _download(b, rel, cache / rel)
                n += 1
                dirty = True
            except (ArchiveError, _NotFound, OSError) as exc:
                failed.append((rel, f"copying {b.where(rel)} down: {exc}"))
    except ArchiveUnreachable as exc:
        return SyncResult(pulled=n, failed=tuple(failed), ignored=tuple(ignored), error=str(exc))
    except (ArchiveError, _NotFound, OSError) as exc:
        return SyncResult(pulled=n, failed=tuple(failed), ignored=tuple(ignored), error=f"pulling: {exc}")
    finally:
        if dirty:
            state.write(cache)
    return SyncResult(pulled=n, failed=tuple(failed), ignored=tuple(ignored))


def _download(b: Bucket, rel: str, dest: Path) -> list:
    head = b.head(rel) or {}
    meta = head.get("Metadata") or {}
    want = meta.get("sha256")
    try:
        mode = int(meta.get("mode") or "444", 8) & 0o777
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
            raise ArchiveError(f"it reads back as sha256 {sha[:12]}, but was uploaded as {want[:12]}; not copied")
        os.chmod(tmp, mode)  # as it was in the copy it came from: originals and summaries 0444
        os.rename(tmp, dest)
        fsync_dir(dest.parent)
    finally:
        tmp.unlink(missing_ok=True)
    st = os.stat(dest)
    return [st.st_size, st.st_mtime_ns, sha]


def confirm(settings: Settings, rels: Iterable[str]) -> SyncResult:
    """Upload the given files of the copy, then their day folders' manifests; which are now safely in the bucket.

    A local archive confirms everything: its copies were made durable before this is asked.
    """
    rels = sorted(set(rels))
    b = bucket(settings)
    if b is None:
        return SyncResult(confirmed=frozenset(rels))
    cache = settings.paths.archive
    manifests = sorted({r.rsplit("/", 1)[0] + "/" + MANIFEST for r in rels if r.startswith(f"{DAILY}/")})
    return _push(settings, b, rels + [m for m in manifests if (cache / m).is_file()], settle_owed=False)


def push(settings: Settings) -> SyncResult:
    """The deletes owed, then every file of the copy that changed since it went up."""
    b = bucket(settings)
    return SyncResult() if b is None else _push(settings, b, None, settle_owed=True)


def _push(settings: Settings, b: Bucket, rels: list[str] | None, *, settle_owed: bool) -> SyncResult:
    cache = settings.paths.archive
    lock_days = _lock_days(settings)
    pushed = recognised = deleted = 0
    confirmed, failed = set(), []
    try:
        ours(settings, b)
        state = State.read(cache, b.url)
    except (ArchiveUnreachable, ArchiveError) as exc:
        return SyncResult(error=str(exc))
    dirty = False
    try:
        if settle_owed:
            deleted, owed_failed, dirty = _settle(b, state)
            failed += owed_failed
        for rel in rels if rels is not None else _local_files(cache):
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
                original = is_original(rel)
                try:
                    if b.put(rel, path, sha, st.st_size, original=original, lock_days=lock_days):
                        pushed += 1
                    else:
                        recognised += 1
                except ArchiveError as exc:
                    failed.append((rel, str(exc)))
                    continue
                if not original and b.versioned():
                    state.old_versions.append(rel)  # deleted below, or owed
            state.files[rel] = [st.st_size, st.st_mtime_ns, sha]
            confirmed.add(rel)
            dirty = True
        if state.old_versions:
            failed += _drop_old(b, state)
            dirty = True
    except ArchiveUnreachable as exc:
        return SyncResult(
            pushed=pushed,
            recognised=recognised,
            deleted=deleted,
            confirmed=frozenset(confirmed),
            failed=tuple(failed),
            error=str(exc),
        )
    finally:
        if dirty:
            state.write(cache)
    return SyncResult(
        pushed=pushed, recognised=recognised, deleted=deleted, confirmed=frozenset(confirmed), failed=tuple(failed)
    )


def _settle(b: Bucket, state: State) -> tuple[int, list, bool]:
    """Delete the keys owed, every version; (deleted, failed, changed). ArchiveUnreachable stops it."""
    deleted, failed, changed = 0, [], False
    for rel in sorted(set(state.deletes)):
        try:
            b.delete(rel)
        except ArchiveError as exc:  # under a retention the bucket enforces (compliance mode): owed still
            failed.append((rel, f"purged here, still owed to the bucket: {exc}"))
            continue
        deleted += 1
        state.deletes = [r for r in state.deletes if r != rel]
        state.files.pop(rel, None)
        changed = True
    return deleted, failed, changed


def _drop_old(b: Bucket, state: State) -> list:
    """Delete the older versions of replaced derived files; what the bucket keeps stays owed."""
    failed, left = [], []
    for rel in sorted(set(state.old_versions)):
        try:
            b.delete(rel, keep_latest=True)
        except ArchiveError as exc:
            failed.append((rel, f"older versions kept by the bucket, owed: {exc}"))
            left.append(rel)
    state.old_versions = left
    return failed


def _lock_days(settings: Settings) -> int:
    days = settings.retention.archive_lock_days
    if days and settings.retention.archive_days:
        days = min(days, settings.retention.archive_days)
    return days


def owe(settings: Settings, rels: Iterable[str]) -> None:
    """Record keys to delete from the bucket, durably, before their local files go (``settle`` deletes them)."""
    b = bucket(settings)
    rels = sorted(set(rels))
    if b is None or not rels:
        return
    cache = settings.paths.archive
    state = State.read(cache, b.url)
    state.deletes = sorted(set(state.deletes) | set(rels))
    state.write(cache)


def settle(settings: Settings) -> SyncResult:
    """Delete what is owed now, if the bucket is this home's and can be reached; the rest waits for a push."""
    b = bucket(settings)
    if b is None:
        return SyncResult()
    cache = settings.paths.archive
    try:
        ours(settings, b)
        state = State.read(cache, b.url)
        if not state.deletes:
            return SyncResult()
        deleted, failed, changed = _settle(b, state)
    except (ArchiveUnreachable, ArchiveError) as exc:
        return SyncResult(error=str(exc))
    if changed:
        state.write(cache)
    return SyncResult(deleted=deleted, failed=tuple(failed))


def owed(settings: Settings) -> list[str]:
    """Keys purged here that the bucket may still hold (a delete it refused or could not take yet)."""
    if not settings.paths.remote_archive:
        return []
    st = State.read(settings.paths.archive, settings.paths.remote_archive)
    return sorted(set(st.deletes) | set(st.old_versions))


# --- the marker, and the checks of verify ------------------------------------------------


def read_marker(settings: Settings) -> dict | None:
    """The bucket's marker (None: there is none); ArchiveUnreachable / ArchiveError when it cannot be read."""
    b = _the_bucket(settings)
    try:
        data = json.loads(b.read(MARKER))
    except _NotFound:
        return None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def write_marker(settings: Settings, body: dict) -> None:
    b = _the_bucket(settings)
    try:
        b.call(
            f"writing {b.where(MARKER)}",
            "put_object",
            Key=b.key(MARKER),
            Body=(json.dumps(body, indent=2) + "\n").encode(),
        )
    except _NotFound:  # the only thing missing when a write finds nothing is the bucket
        raise ArchiveError(
            f"paths.archive: the bucket {b.bucket} does not exist at this endpoint: create it "
            f"(e.g. `aws s3 mb s3://{b.bucket}`), or check AWS_ENDPOINT_URL and the credentials, "
            "then run `kenang init` again"
        ) from None


def lock_summary(settings: Settings) -> str:
    """One line for init and docs/beyond-one-box.md's claim: whether the bucket locks what kenang uploads."""
    enabled, has_rule = _the_bucket(settings).lock()
    if not enabled:
        return "no object lock on this bucket: originals are protected by kenang's no-overwrite rule alone"
    if has_rule:
        return "object lock on, with the bucket's default retention"
    days = _lock_days(settings)
    return (
        f"object lock on: each original is kept in governance mode for {days} days"
        if days
        else "object lock on, but retention.archive_lock_days is 0 and the bucket has no default retention"
    )


@dataclass(frozen=True)
class RemoteCheck:
    checked: int = 0
    missing: tuple = ()  # recorded originals the bucket lacks
    changed: tuple = ()  # recorded originals whose bytes in the bucket differ from the record
    unrecorded: tuple = ()  # originals in the bucket no record knows
    not_uploaded: tuple = ()  # files of the copy not in the bucket yet (the next run uploads them)
    not_in_copy: tuple = ()  # recorded originals the bucket holds and the local copy lacks (the next run pulls them)
    purged_still_there: tuple = ()  # purged here, still in the bucket (owed)
    ignored: tuple = ()  # keys kenang will not copy down (a folder object, a '..' in the name)
    error: str | None = None

    @property
    def problems(self) -> int:
        return len(self.missing) + len(self.changed) + len(self.unrecorded) + int(self.error is not None)


def verify(settings: Settings, recorded: Mapping[str, str], known: set[str], purged: set[str]) -> RemoteCheck | None:
    """Read every recorded original back from the bucket and compare its sha256 (read-only: nothing is pulled).

    ``recorded``: path -> sha256 of archive_files; ``known``: other originals on record
    (the exports transcripts were cut from); ``purged``: paths in purge_log.
    """
    b = bucket(settings)
    if b is None:
        return None
    cache = settings.paths.archive
    try:
        ours(settings, b)
        state = State.read(cache, b.url)
        there = b.list()
        missing, changed, not_in_copy = [], [], []
        for rel, sha in sorted(recorded.items()):
            if rel not in there:
                missing.append(rel)
                continue
            try:
                got = b.stream_to(rel)[0]
            except _NotFound:
                missing.append(rel)
                continue
            if got != sha:
                changed.append(rel)
            elif not os.path.lexists(cache / rel):
                not_in_copy.append(rel)
        unrecorded = sorted(
            r
            for r in there
            if is_original(r) and r not in recorded and r not in known and r not in purged and _safe_rel(r)
        )
        waiting = []
        for rel in _local_files(cache):
            entry = state.files.get(rel)
            if rel not in there or entry is None or sha256_file(cache / rel) != entry[2]:
                waiting.append(rel)
        owed_now = (set(state.deletes) | set(state.old_versions) | purged) & set(there)
        return RemoteCheck(
            len(recorded),
            tuple(missing),
            tuple(changed),
            tuple(unrecorded),
            tuple(waiting),
            tuple(not_in_copy),
            tuple(sorted(owed_now)),
            tuple(r for r in there if not _safe_rel(r)),
        )
    except (ArchiveUnreachable, ArchiveError) as exc:
        return RemoteCheck(error=str(exc))
