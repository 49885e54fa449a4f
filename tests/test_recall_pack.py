"""Recall packs: made at a run's end, dropped before the chunks change, and searched exactly as the chunks."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from helpers import NOW, compacts_match, drop, md
from test_recall_flow import D17, archive_days, night

from flows.query.recall import Recaller
from flows.store import compact, recall_pack, warehouse

pytestmark = pytest.mark.usefixtures("prefect_api")

QUERIES = ("proxmox boot order", "cadangan NAS", "sahur jam berapa", "postgres", "nothing matches zzz")


def slow(home, user) -> Recaller:
    """The index built from the chunks themselves: a date range never reads the pack."""
    return Recaller(home, user, start=dt.date(2000, 1, 1))


def same_results(home, user) -> None:
    fast, built = Recaller(home, user), slow(home, user)
    assert fast._data.keyword is not built._data.keyword
    for mode in ("keyword", "hybrid", "vector"):
        for q in QUERIES:
            assert np.allclose(fast.scores(q, mode), built.scores(q, mode), atol=1e-6)
            assert [h.as_dict(q) for h in fast.search(q, mode=mode)] == [
                h.as_dict(q) for h in built.search(q, mode=mode)
            ]


def first_night(home):
    """Two users' days archived and run once: (warehouse, gading's pack folder)."""
    archive_days(home)
    night(home)
    return home.paths.warehouse, recall_pack.folder(home.paths.warehouse, "gading")


def files_of(folder) -> dict:
    """Each file of a pack folder: (bytes, mtime)."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_a_night_makes_each_users_pack_and_recall_reads_it(home, fake):
    archive_days(home)
    night(home)
    wh = home.paths.warehouse
    for user in ("gading", "rina"):
        pack = recall_pack.load(wh, user)
        assert pack is not None and pack.embedder_id == fake.id
        assert pack.embeddings.shape == (pack.meta.num_rows, fake.dim)
        same_results(home, user)
    assert compacts_match(home)


def test_a_pack_is_dropped_before_its_chunks_change_and_made_again_at_the_end(home, fake, monkeypatch):
    archive_days(home)
    night(home)
    wh = home.paths.warehouse
    before = recall_pack.load(wh, "gading").meta.num_rows
    seen = []
    real = warehouse.write_file

    def spy(path, data, table):
        if table.name == "memory_chunks" and "compact" not in path.relative_to(wh).parts:
            user, month = path.parent.name.removeprefix("user_id="), path.parent.parent.name.removeprefix("date=")[:7]
            seen.append(recall_pack.manifest(wh, user, month).exists())
        return real(path, data, table)

    monkeypatch.setattr(warehouse, "write_file", spy)
    drop(
        home,
        "gading/e.md",
        md(
            "2026-07-18",
            "2300",
            ("user", "NAS backup verified, Proxmox too."),
            ("assistant", "Good."),
            user_id="gading",
        ),
    )
    night(home, NOW + dt.timedelta(days=1))
    assert seen and not any(seen)  # gone before every chunk partition it was made from changed
    assert recall_pack.load(wh, "gading").meta.num_rows > before
    same_results(home, "gading")
    assert compacts_match(home)


def test_a_rerun_leaves_the_pack_alone_and_the_same_chunks_make_the_same_bytes(home, fake):
    wh, folder = first_night(home)
    snap = files_of(folder)
    night(home)
    assert files_of(folder) == snap
    recall_pack.drop(wh, "gading")
    assert recall_pack.refresh(wh) == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {k: v[0] for k, v in snap.items()}


def test_a_pack_with_a_file_gone_is_not_used_and_a_backfill_mends_a_changed_one(home, fake):
    wh, folder = first_night(home)
    vocab = next(folder.glob("*.kw-vocab.npy"))
    vocab.unlink()
    assert recall_pack.load(wh, "gading") is None
    same_results(home, "gading")  # read the slow way, the same answers

    recall_pack.drop(wh, "gading")
    recall_pack.refresh(wh)
    counts = next(folder.glob("*.kw-tfs.npy"))
    counts.write_bytes(counts.read_bytes()[:-4] + b"\0\0\0\0")
    assert recall_pack.changed(wh, "gading") == [counts.name]
    from flows.pipeline import backfill

    backfill(start=D17, end=D17, home=str(home.paths.home))
    assert recall_pack.changed(wh, "gading") == []
    same_results(home, "gading")


def test_keyword_only_homes_get_packs_without_a_matrix(home, monkeypatch):
    archive_days(home)
    night(home)  # the home fixture's embedder is none: keyword only
    pack = recall_pack.load(home.paths.warehouse, "gading")
    assert pack is not None and pack.embeddings is None and pack.embedder_id is None
    fast, built = Recaller(home, "gading"), slow(home, "gading")
    for q in QUERIES:
        assert [h.as_dict(q) for h in fast.search(q)] == [h.as_dict(q) for h in built.search(q)]


def test_a_night_in_a_new_month_makes_only_that_months_segment(home, fake):
    """By month, so a night's cost does not grow with history: July's files are left as they were."""
    wh, folder = first_night(home)
    july = files_of(folder)
    assert recall_pack.months_with_manifests(wh, "gading") == ["2026-07"]
    later = NOW + dt.timedelta(days=14)
    drop(
        home,
        "gading/aug.md",
        md(
            "2026-08-02",
            "0900",
            ("user", "ZFS scrub on the NAS found nothing."),
            ("assistant", "Good: the pool is healthy."),
            user_id="gading",
        ),
        mtime=(later - dt.timedelta(days=1)).timestamp(),
    )
    night(home, later)
    assert recall_pack.months_with_manifests(wh, "gading") == ["2026-07", "2026-08"]
    assert {k: v for k, v in files_of(folder).items() if k in july} == july  # not one byte or mtime of July changed
    same_results(home, "gading")
    assert compacts_match(home)


def test_a_pack_of_the_older_whole_history_layout_is_tidied_away(home, fake):
    wh, folder = first_night(home)
    (folder / "pack.json").write_text('{"version": 1}\n')
    (folder / "0123456789abcdef.kw-weights.npy").write_bytes(b"old")
    assert recall_pack.load(wh, "gading") is not None  # the old manifest is no month's: ignored
    recall_pack.drop(wh, "gading", "2026-07")
    recall_pack.refresh(wh)
    assert not (folder / "pack.json").exists() and not list(folder.glob("*.kw-weights.npy"))
    same_results(home, "gading")


def test_a_segment_made_from_its_months_copy_read_in_order_is_the_one_a_sorted_scan_makes(home, fake, monkeypatch):
    """The copy is already in the pack's order, so it is read as it is, a batch of rows at a time, without the
    sort's memory: the same bytes as a segment made from the month's partitions, sorted whole."""
    wh, _ = first_night(home)
    monkeypatch.setattr(recall_pack, "BATCH_ROWS", 2)  # rows files of many batches
    made = {
        (user, month): recall_pack.segment_files((wh, user, month, True))
        for user in ("gading", "rina")
        for month in recall_pack.months(wh, user)
    }
    assert all(compact.path_for(wh, "memory_chunks", u, m) for u, m in made)  # every month has its copy
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", 0)  # every copy read a batch at a time...
    monkeypatch.setattr(recall_pack, "READ_ROWS", 6)  # ...of a few rows
    for (user, month), got in made.items():
        assert got is not None and got.files == recall_pack.segment_files((wh, user, month, True)).files
    real = compact.path_for
    monkeypatch.setattr(
        compact, "path_for", lambda wh, name, *a: None if name == "memory_chunks" else real(wh, name, *a)
    )
    for (user, month), got in made.items():
        assert got is not None and got.files == recall_pack.segment_files((wh, user, month, True)).files
    real = compact.path_for
    monkeypatch.setattr(
        compact, "path_for", lambda wh, name, *a: None if name == "memory_chunks" else real(wh, name, *a)
    )
    for (user, month), got in made.items():
        assert got is not None and got.files == recall_pack.segment_files((wh, user, month, True)).files


def test_a_nights_look_at_the_pack_reads_each_manifest_once(home, fake, monkeypatch):
    """What a night with nothing to make reads of the pack: each month's manifest once, and its folder listed once
    per user, not a file stat per segment file (a history of years has hundreds)."""
    wh, folder = first_night(home)
    snap = files_of(folder)
    read = []
    real = recall_pack._info
    monkeypatch.setattr(
        recall_pack, "_info", lambda wh, user, month, *a: read.append((user, month)) or real(wh, user, month, *a)
    )
    assert recall_pack.refresh(wh) == 0
    months = [(u, m) for u in recall_pack.users(wh) for m in recall_pack.months(wh, u)]
    assert sorted(read) == sorted(months)
    assert files_of(folder) == snap
    # a file removed by hand is still seen from the listing, and its segment made again
    next(folder.glob("*.kw-vocab.npy")).unlink()
    read.clear()
    recall_pack.refresh(wh)
    assert recall_pack.load(wh, "gading") is not None
    same_results(home, "gading")


@pytest.mark.parametrize("n", [0, 1, 511, 512, 513, 5000])
def test_a_vocabulary_read_from_its_file_finds_what_the_array_finds(tmp_path, n):
    """``FileArray.equal_range`` (a fence, then one block read) is ``np.searchsorted`` of the whole array, left and
    right, for values before, between, on, repeated and after the stored ones; one value is read as ``a[i]`` reads
    it."""
    rng = np.random.default_rng(n)
    values = np.sort(rng.integers(0, 2**63, n, dtype=np.uint64))
    if n > 3:
        values[n // 2 : n // 2 + 3] = values[n // 2]  # a run of one hash (a collision)
    path = tmp_path / "hashes.npy"
    np.save(path, values)
    f = recall_pack.FileArray(path)
    ends = np.array([0, 2**64 - 1], dtype=np.uint64)
    probe = np.concatenate([values, values + np.uint64(1), ends, rng.integers(0, 2**63, 50, dtype=np.uint64)])
    lo, hi = f.equal_range(probe)
    assert lo.tolist() == np.searchsorted(values, probe, side="left").tolist()
    assert hi.tolist() == np.searchsorted(values, probe, side="right").tolist()
    if n:
        assert f[0] == values[0] and f[-1] == values[-1] and f[n // 2] == values[n // 2]
        with pytest.raises(IndexError):
            f[n]


def test_a_search_looks_each_of_its_terms_up_once_in_each_month(home, fake, monkeypatch):
    """A query asks for its terms several times (scores, coverage, gloss); within one search each is looked up in a
    month's vocabulary file once, and the next search looks again (nothing is kept between searches)."""
    first_night(home)
    r = Recaller(home, "gading")
    assert isinstance(r._data.keyword.segments[0].hashes, recall_pack.FileArray)
    looked: list[int] = []
    real = recall_pack.FileArray.equal_range
    monkeypatch.setattr(
        recall_pack.FileArray, "equal_range", lambda self, v: looked.extend(v.tolist()) or real(self, v)
    )
    months = len(r._data.keyword.segments)
    for _ in range(2):
        looked.clear()
        assert r.search("proxmox boot order", mode="hybrid")
        assert looked and max(looked.count(h) for h in set(looked)) == months
