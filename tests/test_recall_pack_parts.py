"""A month's recall pack segment in parts: a night's new day makes a part of its own beside the month's segment,
and the pack reads exactly as the month made whole."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.store import compact, recall_pack, warehouse
from schemas.tables import COMPACTS

USER = "gading"
JULY = "2026-07"
QUERIES = ("t1", "t2 t7", "t3 t11 t19", "t0 t5", "zzz")


def _rows(day: dt.date, n: int, seed: int) -> pa.Table:
    """``n`` memory_chunks rows of one day, each with its terms and an embedding."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        source = rnd.choice(["transcript", "summary"])
        terms = sorted({f"t{rnd.randrange(20)}" for _ in range(3)})
        vec = np.array([rnd.gauss(0, 1) for _ in range(8)], dtype=np.float32)
        rows.append(
            {
                "chunk_id": f"{day:%m%d}-{i:03d}",
                "user_id": USER,
                "date": day,
                "session_id": f"s{rnd.randrange(3)}" if source == "transcript" else None,
                "source": source,
                "seq": i,
                "text": f"teks {day} {i}",
                "flagged": [],
                "terms": terms,
                "tfs": [1 + rnd.randrange(3) for _ in terms],
                "embedder_id": "fake@1",
                "embedding": (vec / np.linalg.norm(vec)).tolist(),
                "run_id": "r",
            }
        )
    return pa.Table.from_pylist(rows, schema=COMPACTS["memory_chunks"].source.schema)


def _write_day(wh, day: dt.date, seed: int = 0, n: int = 12) -> None:
    sink = pa.BufferOutputStream()
    pq.write_table(_rows(day, n, seed or day.toordinal()), sink)
    warehouse.write_partition(wh, COMPACTS["memory_chunks"].source, sink.getvalue().to_pybytes(), day, USER)


def _run_end(wh, ann_from: int = 10**9, check: bool = False) -> None:
    """What a run's end does: the copies (these partitions have no ledger: their folders are listed), then the
    packs (no ANN index below ``ann_from`` chunks)."""
    compact.refresh(wh, check=True)
    recall_pack.refresh(wh, [USER], check=check, ann_from=ann_from)


def _info(wh, month: str = JULY) -> dict:
    return json.loads(recall_pack.manifest(wh, USER, month).read_text())


def _days_of_parts(wh, month: str = JULY) -> list[list[str]]:
    return [p["days"] for p in recall_pack.parts_of(_info(wh, month))]


def _same_as_whole(wh) -> None:
    """The pack as the nights left it reads as the pack made whole from the chunks now: rows, embeddings, BM25."""
    got, want = recall_pack.load(wh, USER), recall_pack.contents(wh, USER)
    assert got is not None and want is not None
    assert got.meta.to_pylist() == want.meta.to_pylist()
    assert got.table().to_pylist() == want.table().to_pylist()
    assert np.array_equal(np.asarray(got.embeddings), np.asarray(want.embeddings))
    for q in QUERIES:
        assert np.allclose(got.keyword.scores(q), want.keyword.scores(q), atol=1e-6), q
    assert recall_pack.changed(wh, USER) == []


def _named(wh) -> set[str]:
    """The files of the user's pack folder that are not manifests."""
    return {p.name for p in recall_pack.folder(wh, USER).iterdir() if not p.name.endswith(".json")}


def _manifest_files(wh) -> set[str]:
    return {n for m in recall_pack.months_with_manifests(wh, USER) for n in _info(wh, m)["sha256"]}


@pytest.fixture
def month(tmp_path):
    """Ten days of July, made into copies and a pack as a run's end makes them."""
    wh = tmp_path
    for d in range(1, 11):
        _write_day(wh, dt.date(2026, 7, d))
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-10"]]
    return wh


def test_a_nights_new_day_is_a_part_beside_the_month_and_reads_as_the_month_made_whole(month):
    wh = month
    before = {p.name: p.read_bytes() for p in recall_pack.folder(wh, USER).iterdir() if p.name.startswith(("0", "1"))}
    first = dict(_info(wh))
    _write_day(wh, dt.date(2026, 7, 11))
    # out of use before the chunks changed, kept aside as the month's base
    assert not recall_pack.manifest(wh, USER, JULY).exists()
    base, added = warehouse.pack_base(wh, USER, JULY)
    assert json.loads(base.read_text()) == first and json.loads(added.read_text()) == ["2026-07-11"]
    assert recall_pack.load(wh, USER) is None  # a month without a segment: readers take the slow way

    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-10"], ["2026-07-11", "2026-07-11"]]
    parts = recall_pack.parts_of(_info(wh))
    assert parts[0]["files"] == first["files"]  # the month's files kept as they were, not made again
    assert all((recall_pack.folder(wh, USER) / n).read_bytes() == b for n, b in before.items() if n in _named(wh))
    assert not base.exists() and not added.exists()
    assert _named(wh) == _manifest_files(wh)
    _same_as_whole(wh)


def test_the_newest_part_takes_in_the_parts_no_longer_than_twice_it_so_a_month_keeps_few(month):
    wh = month
    spans = []
    for d in range(11, 32):
        _write_day(wh, dt.date(2026, 7, d))
        _run_end(wh)
        spans.append([(dt.date.fromisoformat(b) - dt.date.fromisoformat(a)).days + 1 for a, b in _days_of_parts(wh)])
        assert len(spans[-1]) <= 5
    assert spans[:4] == [[10, 1], [10, 2], [10, 3], [10, 3, 1]]
    assert sum(spans[-1]) == 31
    _same_as_whole(wh)
    assert _named(wh) == _manifest_files(wh)


def test_a_day_the_month_holds_changed_makes_the_month_whole_and_its_old_files_go(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 11))
    _run_end(wh)
    old = _named(wh)
    _write_day(wh, dt.date(2026, 7, 5), seed=99, n=3)  # a reload or a forget of a day the segment holds
    assert not recall_pack.manifest(wh, USER, JULY).exists()
    assert not any(p.exists() for p in warehouse.pack_base(wh, USER, JULY))
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-11"]]
    assert not old & _named(wh)  # no file of the segments made before is left on disk
    _same_as_whole(wh)


def test_a_month_in_parts_is_made_whole_once_a_later_month_has_chunks(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 11))
    _run_end(wh)
    assert len(_days_of_parts(wh)) == 2
    _write_day(wh, dt.date(2026, 8, 1))
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-11"]]
    assert _days_of_parts(wh, "2026-08") == [["2026-08-01", "2026-08-01"]]
    _same_as_whole(wh)
    assert _named(wh) == _manifest_files(wh)


def test_a_base_with_a_file_gone_or_an_unreadable_list_is_not_kept_the_month_is_made_whole(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 11))
    base, added = warehouse.pack_base(wh, USER, JULY)
    gone = sorted(json.loads(base.read_text())["files"].values())[0]
    (recall_pack.folder(wh, USER) / gone).unlink()
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-11"]]
    _same_as_whole(wh)

    _write_day(wh, dt.date(2026, 7, 12))
    added.write_text("not json")
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-12"]]
    assert not base.exists() and not added.exists()
    _same_as_whole(wh)


def test_two_new_days_before_a_runs_end_make_one_part_and_a_rerun_changes_nothing(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 12))
    _write_day(wh, dt.date(2026, 7, 14))
    assert json.loads(warehouse.pack_base(wh, USER, JULY)[1].read_text()) == ["2026-07-12", "2026-07-14"]
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-10"], ["2026-07-12", "2026-07-14"]]
    _same_as_whole(wh)
    snap = {p.name: p.read_bytes() for p in recall_pack.folder(wh, USER).iterdir()}
    _run_end(wh)
    assert {p.name: p.read_bytes() for p in recall_pack.folder(wh, USER).iterdir()} == snap


def test_forgetting_a_users_pack_drops_the_set_aside_segment_too(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 11))
    base, added = warehouse.pack_base(wh, USER, JULY)
    assert base.exists()
    warehouse.drop_pack(wh, USER)
    assert not base.exists() and not added.exists()


def test_a_user_with_ann_indexes_gets_whole_months(month):
    """Which rows an approximate search scores exactly depends on how a month is cut: a user searched
    approximately gets the month made whole each night, as before, so the answers never depend on the nights."""
    wh = month
    _run_end(wh, ann_from=0)  # the user reaches recall.exact_below: every month made again with its index
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-10"]]
    _write_day(wh, dt.date(2026, 7, 11))
    _run_end(wh, ann_from=0)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-11"]]
    assert recall_pack.load(wh, USER).ann_blocks is not None
    _same_as_whole(wh)
    assert not any(p.exists() for p in warehouse.pack_base(wh, USER, JULY))


def test_a_keyword_only_user_past_the_ann_threshold_still_gets_a_nights_part(tmp_path):
    """No embeddings, no ANN index: how a month is cut changes no answer, so a night makes its own day's part."""
    wh = tmp_path

    def keyword_only(day: dt.date) -> None:
        rows = _rows(day, 12, day.toordinal()).to_pylist()
        table = [{**r, "embedder_id": None, "embedding": None} for r in rows]
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(table, schema=COMPACTS["memory_chunks"].source.schema), sink)
        warehouse.write_partition(wh, COMPACTS["memory_chunks"].source, sink.getvalue().to_pybytes(), day, USER)

    for d in range(1, 11):
        keyword_only(dt.date(2026, 7, d))
    _run_end(wh, ann_from=0)
    keyword_only(dt.date(2026, 7, 11))
    _run_end(wh, ann_from=0)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-10"], ["2026-07-11", "2026-07-11"]]
    assert recall_pack.load(wh, USER).ann_blocks is None
    _same_as_whole(wh)
    _write_day(wh, dt.date(2026, 7, 12))  # an embedder configured: the night's day has embeddings
    _run_end(wh, ann_from=0)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-12"]]  # made whole, with its ANN index
    assert recall_pack.load(wh, USER).ann_blocks is not None


def test_a_copy_made_again_without_its_base_takes_the_segments_base_with_it(month):
    """A copy whose bytes changed behind kenang's back is made again from the partitions, not from its base: the
    segment set aside with it (made from those bytes) is not kept either."""
    wh = month
    copy = warehouse.compact_file(wh, "memory_chunks", USER, JULY)
    t = pq.read_table(copy)
    copy.chmod(0o644)
    pq.write_table(t.set_column(t.column_names.index("text"), "text", pa.array(["TAMPERED"] * t.num_rows)), copy)
    recall_pack.drop(wh, USER, JULY)
    recall_pack.refresh(wh, [USER], ann_from=10**9)  # a segment made from the changed copy
    _write_day(wh, dt.date(2026, 7, 11))
    _run_end(wh)
    assert warehouse.intact(copy) and _days_of_parts(wh) == [["2026-07-01", "2026-07-11"]]
    assert "TAMPERED" not in recall_pack.load(wh, USER).table()["text"].to_pylist()
    _same_as_whole(wh)


def test_a_backfill_keeps_no_part_whose_bytes_changed_and_a_damaged_base_is_no_base(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 11))
    base, added = warehouse.pack_base(wh, USER, JULY)
    f = recall_pack.folder(wh, USER) / json.loads(base.read_text())["files"]["search"]
    f.chmod(0o644)
    f.write_bytes(f.read_bytes()[:-1] + b"\0")
    _run_end(wh, check=True)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-11"]]
    assert recall_pack.changed(wh, USER) == []
    _same_as_whole(wh)

    _write_day(wh, dt.date(2026, 7, 12))
    info = json.loads(base.read_text())
    base.write_text(json.dumps({**info, "days": ["2026-07-01", "2026-07-1O"]}))  # not a date
    _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-12"]]
    _same_as_whole(wh)


def test_a_part_of_a_big_month_is_read_from_its_copy_a_batch_at_a_time_with_the_same_bytes(tmp_path, monkeypatch):
    """A part that takes in earlier ones is read from the month's copy, filtered to its days, streamed from a big
    copy as a whole month is: the same files as when the copy is read whole."""
    wh = tmp_path
    for d in range(1, 11):
        _write_day(wh, dt.date(2026, 7, d), n=60)
    _run_end(wh)
    for d in (11, 12, 13):  # 12 takes in 11, 13 takes in both: a part of three days
        _write_day(wh, dt.date(2026, 7, d), n=60)
        _run_end(wh)
    assert _days_of_parts(wh) == [["2026-07-01", "2026-07-10"], ["2026-07-11", "2026-07-13"]]
    args = (wh, USER, JULY, False, ("2026-07-11", "2026-07-13"))
    held = recall_pack.segment_files(args)
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", 0)  # every copy big: read a batch at a time
    streamed = recall_pack.segment_files(args)
    assert held is not None and streamed is not None and streamed.files == held.files
    assert set(held.files) <= _named(wh)  # the very part the nights made
    _same_as_whole(wh)


def test_a_set_aside_segment_of_a_month_with_no_chunks_left_goes_at_the_runs_end(month):
    wh = month
    _write_day(wh, dt.date(2026, 7, 11))
    assert all(p.exists() for p in warehouse.pack_base(wh, USER, JULY))
    # Every chunk of July gone before the run's end (a purge of the month), and a day of August.
    root = warehouse.table_dir(wh, COMPACTS["memory_chunks"].source)
    for day_dir in root.glob(f"date={JULY}-*"):
        shutil.rmtree(day_dir)
    copy = warehouse.compact_file(wh, "memory_chunks", USER, JULY)
    copy.unlink(missing_ok=True)
    warehouse.checksum_file(copy).unlink(missing_ok=True)
    _write_day(wh, dt.date(2026, 8, 1))
    _run_end(wh)
    assert recall_pack.months_with_manifests(wh, USER) == ["2026-08"]
    assert not any(p.exists() for p in warehouse.pack_base(wh, USER, JULY))
    assert not [p.name for p in recall_pack.folder(wh, USER).iterdir() if p.name.startswith(".")]
