"""Test helpers: drop transcripts into a home, and snapshot a home's whole state."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from flows.config import Settings
from flows.store import warehouse
from schemas.tables import TABLES

JAKARTA = dt.timezone(dt.timedelta(hours=7))
NOW = dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA)  # 2026-07-19 eligible, 2026-07-20 not
OLD = (NOW - dt.timedelta(days=1)).timestamp()  # an mtime well past any quiet period
CRASHED = 137  # the exit status crash_at's child dies with
VOLATILE = {"run_id", "archived_at", "updated_at", "quarantined_at", "summary_run_id", "index_run_id", "llm_seconds"}


def md(
    day: str, hhmm: str, *turns: tuple[str, str], session_id: str | None = None, user_id: str | None = None
) -> bytes:
    """A markdown transcript whose turns start at day hhmm (+07:00), a minute apart."""
    head = []
    if session_id or user_id:
        head = (
            ["---"]
            + ([f"session_id: {session_id}"] if session_id else [])
            + ([f"user_id: {user_id}"] if user_id else [])
            + ["---"]
        )
    start = dt.datetime.fromisoformat(f"{day}T{hhmm[:2]}:{hhmm[2:]}:00+07:00")
    body = [f"Parent Day: [[{day}]]", ""]
    for i, (role, text) in enumerate(turns):
        body += [f"## {role} · {(start + dt.timedelta(minutes=i)).isoformat()}", text, ""]
    return ("\n".join(head + body)).encode()


def jsonl(*records: dict) -> bytes:
    return ("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n").encode()


def drop(settings: Settings, relpath: str, data: bytes, mtime: float | None = OLD) -> Path:
    """Write a file under active/ with the given mtime (None: now, i.e. still being written)."""
    path = settings.paths.active / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def scenario(settings: Settings) -> None:
    """A night with every kind of file: good ones of two users, bad ones, and ones to leave alone."""
    drop(
        settings,
        "2026-07-19-1037.md",
        md(
            "2026-07-19",
            "1037",
            ("user", "Pagi! Lanjut setup Proxmox."),
            ("assistant", "Oke, buka Options > Start order."),
            session_id="2026-07-19-1037",
        ),
    )
    drop(
        settings,
        "gading/2026-07-18-2340.md",
        md("2026-07-18", "2340", ("user", "Masih bangun?"), ("assistant", "Ya."), ("user", "password: hunter2-test")),
    )
    drop(
        settings,
        "rina/chat.jsonl",
        jsonl(
            {
                "role": "user",
                "content": "Kak, jadwal sahur besok jam 3?",
                "timestamp": "2026-07-19T21:00:00+07:00",
                "user_id": "rina",
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Jam 03.00 ya."}], "timestamp": 1784470000},
        ),
    )
    drop(settings, "broken.jsonl", b'{"role": "user", "content": "hi"}\n{"role": "assist')
    drop(settings, "latin1.md", "## user\ncaf\xe9\n".encode("latin-1"))
    link = settings.paths.active / "linked.md"
    os.symlink("/etc/hostname", link)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    drop(settings, "2026-07-20-0100.md", md("2026-07-20", "0100", ("user", "Hari ini belum selesai.")))
    drop(settings, "gading/writing-now.md", md("2026-07-18", "0900", ("user", "masih ditulis")), mtime=None)


def snapshot(settings: Settings) -> dict:
    """Everything a user could observe in a home, minus run ids and wall-clock stamps."""
    out: dict = {}
    for name in ("active", "archive", "quarantine"):
        root = getattr(settings.paths, name)
        for p in sorted(root.rglob("*")):
            key = f"{name}/{p.relative_to(root).as_posix()}"
            if p.name == ".kenang-archive":
                out[key] = "archive marker"  # names the home, so it differs between two homes
            elif p.is_symlink():
                out[key] = ("link", os.readlink(p))
            elif p.is_file():
                if p.name.endswith(".reason.json"):
                    info = json.loads(p.read_text())
                    out[key] = {k: v for k, v in info.items() if k not in VOLATILE}
                else:
                    out[key] = (hashlib.sha256(p.read_bytes()).hexdigest(), oct(p.stat().st_mode & 0o777))
    for t in ("sessions", "messages", "archive_files", "days", "quarantine", "daily_summaries", "memory_chunks"):
        rows = [
            {k: v for k, v in r.items() if k not in VOLATILE}
            for r in warehouse.read(settings.paths.warehouse, TABLES[t]).to_pylist()
        ]
        out[f"table/{t}"] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return out


def table(settings: Settings, name: str) -> list[dict]:
    return warehouse.read(settings.paths.warehouse, TABLES[name]).to_pylist()


def kenang(*args: str):
    """Run ``kenang ARGS`` in-process with click's CliRunner; the result has exit_code, stdout and stderr."""
    from click.testing import CliRunner

    from flows.cli.main import cli

    return CliRunner().invoke(cli, list(args), prog_name="kenang", catch_exceptions=False)


def compacts_match(settings: Settings) -> int:
    """Assert every compact copy (and recall pack) on disk holds exactly what its partitions hold; returns how many
    copies were checked."""
    from flows.store import compact
    from schemas.tables import COMPACTS

    n = 0
    wh = settings.paths.warehouse
    for c in COMPACTS.values():
        expected = {warehouse.compact_file(wh, c.name, u, m): (u, m) for (u, m) in compact.parts_of(wh, c)}
        folder = wh / "compact" / c.name
        for path in sorted(folder.rglob("*.parquet")) if folder.is_dir() else ():
            if path.name.startswith(
                "."
            ):  # a copy set aside as its month's base (warehouse.compact_base): checked by readers
                continue
            assert path in expected, f"a copy without partitions: {path}"
            built = compact.build(wh, c, *expected[path])
            assert built is not None and warehouse.read_file(path, c.table).to_pylist() == built.to_pylist(), path
            assert warehouse.intact(path)
            n += 1
        for path, (user, month) in sorted(expected.items()):
            base = warehouse.compact_base(path)[0]
            if path.is_file() or not base.is_file():
                continue
            # a newest month kept as its base and the days added after it (compact.refresh): read together
            files = compact.sources(wh, c.name, user, [month])
            assert files[0] == base, (path, files)
            cols = ", ".join(f'"{name}"' for name in c.columns)
            built = compact.build(wh, c, user, month)
            assert built is not None and compact.scan(files, cols, "ORDER BY ALL").to_pylist() == built.to_pylist()
            n += 1
    from flows.store import recall_pack

    for user in recall_pack.users(wh):
        m = recall_pack.folder(wh, user)
        got, want = recall_pack.load(wh, user), recall_pack.contents(wh, user)
        assert got is not None and want is not None, m
        assert got.meta.to_pylist() == want.meta.to_pylist() and got.embedder_id == want.embedder_id, m
        assert got.table().to_pylist() == want.table().to_pylist(), m
        a, b = got.keyword.arrays(), want.keyword.arrays()
        assert all(np.array_equal(a[k], b[k]) for k in a), m
        assert (got.embeddings is None) == (want.embeddings is None), m
        assert got.embeddings is None or np.array_equal(got.embeddings, want.embeddings), m
        assert not recall_pack.changed(wh, user), m
    return n


def crash_at(settings: Settings, boundary: str, nth: int, api_url: str):
    """Run ``kenang run`` in a child whose ``faults.checkpoint`` exits (``CRASHED``) at the ``nth`` ``boundary``."""
    import subprocess
    import sys

    code = (
        "import os, flows.store.faults as f\n"
        "hits = [0]\n"
        "def checkpoint(name):\n"
        f"    if name == {boundary!r}:\n"
        "        hits[0] += 1\n"
        f"        if hits[0] == {nth}:\n"
        f"            os._exit({CRASHED})\n"
        "f.checkpoint = checkpoint\n"
        "from flows.cli.main import main\n"
        f"main(['run', '--home', {str(settings.paths.home)!r}, '--now', {NOW.isoformat()!r}])\n"
    )
    env = {**os.environ, "PREFECT_API_URL": api_url}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


@contextmanager
def fifo_that_cannot_hang(path: Path, seconds: float = 60.0):
    """A named pipe at ``path`` that cannot hang a test: should kenang block opening it to read, a
    writer opens it after ``seconds`` and closes it at once (end of file), so the test ends, and
    fails on its asserts, instead of hanging."""
    import threading

    os.mkfifo(path)

    def unblock() -> None:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # no reader waiting: ENXIO, nothing to do
        except OSError:
            return
        os.close(fd)

    timer = threading.Timer(seconds, unblock)
    timer.daemon = True
    timer.start()
    try:
        yield path
    finally:
        timer.cancel()


@contextmanager
def fifo_that_answers(path: Path, data: bytes, spare: Path):
    """A named pipe at ``path`` that answers ``data`` to a reader that opens it as a plain file is opened
    (blocking): to such code it reads as a regular file holding ``data``. ``spare`` (a path on the same
    filesystem, outside what kenang reads) is a second name of the pipe, through which the writer
    is released when the block ends, should no reader have come."""
    import threading

    os.mkfifo(path)
    os.link(path, spare)

    def answer() -> None:
        fd = os.open(spare, os.O_WRONLY)  # waits for a reader
        try:
            os.write(fd, data)
        except OSError:  # the reader went away
            pass
        finally:
            os.close(fd)

    writer = threading.Thread(target=answer, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        release = os.open(spare, os.O_RDONLY | os.O_NONBLOCK)
        writer.join()
        os.close(release)
        spare.unlink()


def grep_home(settings: Settings, needle: bytes) -> list[Path]:
    """Every file under the home whose bytes hold ``needle``."""
    return [
        p for p in settings.paths.home.rglob("*") if p.is_file() and not p.is_symlink() and needle in p.read_bytes()
    ]


_WIKI_LINK = re.compile(r"\[\[([^\]\n]+)\]\]")


def resolve(link: str, files: list[str]) -> list[str]:
    """The files of a vault an Obsidian ``[[link]]`` opens (exactly one when it resolves).

    As Obsidian resolves: the target is what comes before ``|`` (the alias) and ``#`` (a
    heading); a target holding ``/`` is a path from the vault's root; any other is a
    file's name, which must be unique in the vault. A Markdown file is named without
    ``.md``, any other file with its extension. ``files``: every file, from the root.
    """
    target = link.split("|", 1)[0].split("#", 1)[0]
    if "/" in target:
        return [f for f in files if f in (target, f"{target}.md")]
    names = Counter(Path(f).name for f in files)
    found = [f for f in files if Path(f).name in (target, f"{target}.md")]
    return found if all(names[Path(f).name] == 1 for f in found) else found * 2  # a name twice: ambiguous


def links_of(archive: Path) -> dict[str, list[str]]:
    """Every ``[[...]]`` in every Markdown file of the archive, by the file (from the root) that holds it."""
    out = {}
    for path in sorted(archive.rglob("*.md")):
        found = _WIKI_LINK.findall(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            out[path.relative_to(archive).as_posix()] = found
    return out


def unresolved_links(archive: Path) -> list[tuple[str, str]]:
    """(file, link) for each link of the archive that does not resolve to exactly one of its files."""
    files = sorted(p.relative_to(archive).as_posix() for p in archive.rglob("*") if p.is_file())
    return [(f, link) for f, links in links_of(archive).items() for link in links if len(resolve(link, files)) != 1]
