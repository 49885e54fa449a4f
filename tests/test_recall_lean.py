"""A recall pack read from disk, not loaded: its keyword arm and chunk text are memory-mapped, with the same scores.

The postings and the vocabulary are ``.npy`` files read in place with ``pread`` (the vocabulary as hash-sorted
bytes: no Python object per term), the chunks' columns an Arrow IPC file read a batch at a time. These
tests hold the keyword scores to one ``KeywordIndex`` bit for bit, check that the heap holds none of it,
read the files' bytes after a forget and a purge, and cut a run while a segment is written.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from random import Random

import numpy as np
import pyarrow as pa
import pytest
from helpers import CRASHED, compacts_match, crash_at, drop, kenang, md
from test_recall_flow import archive_days, night

from flows.query.recall import Recaller
from flows.store import recall_pack
from transforms.chunk import chunk_term_counts, terms_of
from transforms.recall import KeywordIndex, PostingSegment, SegmentedIndex, query_terms, term_hash

pytestmark = pytest.mark.usefixtures("prefect_api")

WORDS = (
    "proxmox boot order postgres backup restic nas zfs pool degraded scrub kucing jatuh sahur jam berapa "
    "server kantor rapat besok cat router the a of and di ke yang lampu teras"
).split()


def _docs(rng: Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))) for _ in range(n)]


def _segment(texts: list[str]) -> PostingSegment:
    """A month's segment as a recall pack makes it: from the chunks' dictionary-encoded terms."""
    counted = [chunk_term_counts(t) for t in texts]
    terms = pa.array([list(t) for t, _ in counted], type=pa.list_(pa.string()))
    tfs = pa.array([list(c) for _, c in counted], type=pa.list_(pa.int32()))
    encoded = pa.compute.dictionary_encode(terms.flatten())
    return PostingSegment.build(
        encoded.dictionary.to_pylist(),
        encoded.indices.to_numpy(zero_copy_only=False),
        tfs.flatten().to_numpy(zero_copy_only=False),
        np.diff(terms.offsets.to_numpy()),
    )


@pytest.mark.parametrize("seed", range(4))
def test_a_segmented_index_scores_bit_for_bit_as_one_keyword_index_over_the_same_chunks(seed):
    rng = Random(seed)
    texts = _docs(rng, 120)
    cuts = sorted(rng.sample(range(1, len(texts)), 3))
    parts = [texts[a:b] for a, b in zip([0, *cuts], [*cuts, len(texts)], strict=True)]
    segmented = SegmentedIndex([_segment(p) for p in parts])
    counted = [chunk_term_counts(t) for t in texts]
    whole = KeywordIndex.from_lists([t for t, _ in counted], [c for _, c in counted])
    for query in [*_docs(rng, 25), "kucingku jatuhin Pi-nya", "when did the cat fall", "nothing zzz"]:
        for glossed in (True, False):
            got, want = segmented.scores(query, glossed=glossed), whole.scores(query, glossed=glossed)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), query
    for term in {t for ts, _ in counted for t in ts} | {"zzz", ""}:
        assert segmented.has(term) == whole.has(term)
        assert segmented.docs_with(term).tolist() == whole.docs_with(term).tolist()
        with segmented.remembering():  # within a search, a term's documents as its scores read them
            segmented.scores(term, glossed=False)
            for t in query_terms(term, glossed=False):
                if segmented.has(t):
                    assert t in segmented._memo.docs  # taken from the scores' reads
                assert segmented.docs_with(t).tolist() == whole.docs_with(t).tolist()


def test_a_term_that_shares_its_hash_with_another_is_told_apart_by_its_bytes():
    h = term_hash("kucing")
    seg = PostingSegment(
        np.array([h, h], dtype=np.uint64),
        np.frombuffer(b"kucingrouter", dtype=np.uint8),
        np.array([0, 6, 12]),
        np.array([0, 1, 3]),
        np.array([0, 0, 1], dtype=np.int32),
        np.ones(3, dtype=np.float32),
        np.array([2, 1], dtype=np.float32),
    )
    hashes = np.array([h, h, term_hash("jatuh")], dtype=np.uint64)
    assert seg.find([b"kucing", b"router", b"jatuh"], hashes) == [0, 1, None]
    assert seg.find([b"lampu"], np.array([h], dtype=np.uint64)) == [None]  # its hash, not its bytes
    assert [seg.term(i) for i in range(seg.size)] == ["kucing", "router"]


def test_a_loaded_pack_neither_maps_nor_holds_its_chunks_text_or_postings(home, fake):
    archive_days(home)
    night(home)
    wh = home.paths.warehouse
    pack = recall_pack.load(wh, "gading")
    assert pack is not None
    r = Recaller(home, "gading")
    hits = r.search("proxmox boot order")
    assert hits and "boot order" in hits[0].chunk.text.lower()
    mapped = Path("/proc/self/maps").read_text()
    assert ".rows.arrow" not in mapped and ".kw-postings.npy" not in mapped and ".kw-tfs.npy" not in mapped
    assert ".kw-hashes.npy" not in mapped and ".kw-vocab.npy" not in mapped  # the vocabulary is read in place
    for seg in pack.segments:
        assert isinstance(seg.keyword.postings, recall_pack.FileArray)
        assert seg.meta.column_names == list(recall_pack.SEARCH_COLUMNS)  # all a search holds of each row
    whole = pack.table()
    assert [pack.row(i) for i in range(whole.num_rows)] == whole.to_pylist()
    assert [c.text for c in r._data.refs] == whole["text"].to_pylist()


PHRASE = "Sandi brankas zyxquor qwelbish ada di laci meja."
GONE = ("zyxquor", "qwelbish")  # the words no other chunk holds


def _pack_bytes(home) -> bytes:
    """Every byte of the user's pack files, and the text of every Arrow file's columns (they are compressed)."""
    folder = recall_pack.folder(home.paths.warehouse, "default")
    out = []
    for p in sorted(folder.iterdir()):
        out.append(p.read_bytes())
        if p.suffix == ".arrow":
            t = pa.ipc.open_file(pa.OSFile(str(p))).read_all()
            out += [str(t.column(c).to_pylist()).encode() for c in t.column_names]
    return b"\n".join(out)


@pytest.mark.parametrize("purge", [False, True], ids=["forget", "forget --purge"])
def test_a_forgotten_chunks_text_terms_and_term_hashes_are_gone_from_the_pack_files(home, purge):
    drop(
        home,
        "2026-07-18-0900.md",
        md("2026-07-18", "0900", ("user", "Lanjut setup Proxmox di pve1."), ("assistant", PHRASE)),
    )
    drop(home, "2026-07-19-0900.md", md("2026-07-19", "0900", ("user", "Restic jalan jam 2."), ("assistant", "Oke.")))
    night(home)
    terms = [t for t in dict.fromkeys(terms_of(PHRASE)) if t in GONE]
    assert terms == list(GONE)
    held = _pack_bytes(home)
    assert b"zyxquor qwelbish" in held  # the text, as it was written
    for t in terms:
        assert t.encode() in held and term_hash(t).to_bytes(8, "little") in held  # its term and its hash

    extra = ["--purge"] if purge else []
    r = kenang("forget", "--user", "default", "--text", PHRASE, "--yes", "--home", str(home.paths.home), *extra)
    assert r.exit_code == 0, r.stderr

    left = _pack_bytes(home)
    assert b"zyxquor" not in left and b"qwelbish" not in left  # in no text, term or file name
    for t in terms:
        assert term_hash(t).to_bytes(8, "little") not in left
    assert recall_pack.load(home.paths.warehouse, "default") is not None
    assert compacts_match(home)
    assert any("restic" in h.chunk.text.lower() for h in Recaller(home, "default").search("restic"))  # the rest stays


def test_a_crash_after_a_segments_files_and_before_its_manifest_heals_on_the_next_run(home, prefect_api):
    archive_days(home)
    child = crash_at(home, "recall_pack.files", 1, prefect_api)
    assert child.returncode == CRASHED, child.stderr[-2000:]
    wh = home.paths.warehouse
    assert recall_pack.load(wh, "gading") is None or recall_pack.load(wh, "rina") is None  # one lacks its manifest
    night(home)
    for user in ("gading", "rina"):
        assert recall_pack.load(wh, user) is not None
        named = {f"month={m}.json" for m in recall_pack.months_with_manifests(wh, user)}
        for m in recall_pack.months_with_manifests(wh, user):
            named |= set(recall_pack._info(wh, user, m)["files"].values())
        assert {p.name for p in recall_pack.folder(wh, user).iterdir()} == named  # no file left unnamed
    assert compacts_match(home) > 0


def test_a_pack_file_cut_short_is_not_used_and_a_backfill_makes_it_again(home):
    archive_days(home)
    night(home)
    wh = home.paths.warehouse
    folder = recall_pack.folder(wh, "gading")
    rows = next(folder.glob("*.rows.arrow"))
    want = [h.as_dict("postgres") for h in Recaller(home, "gading").search("postgres")]
    rows.write_bytes(rows.read_bytes()[:100])
    assert recall_pack.load(wh, "gading") is None
    assert [h.as_dict("postgres") for h in Recaller(home, "gading").search("postgres")] == want  # the slow way
    assert recall_pack.changed(wh, "gading") == [rows.name]
    from flows.pipeline import backfill

    backfill(start=dt.date(2026, 7, 17), end=dt.date(2026, 7, 17), home=str(home.paths.home))
    assert recall_pack.changed(wh, "gading") == [] and recall_pack.load(wh, "gading") is not None
    assert [h.as_dict("postgres") for h in Recaller(home, "gading").search("postgres")] == want


def test_a_segment_of_the_previous_layout_is_not_read_and_the_next_night_makes_it_again(home):
    archive_days(home)
    night(home)
    wh = home.paths.warehouse
    folder = recall_pack.folder(wh, "gading")
    path = recall_pack.manifest(wh, "gading", "2026-07")
    old = json.loads(path.read_text())
    (folder / "0123456789abcdef.meta.parquet").write_bytes(b"PAR1 an old segment's rows PAR1")
    (folder / "0123456789abcdef.kw-vocab.npy").write_bytes(b"old")
    path.write_text(json.dumps({**old, "version": 2, "files": {"meta": "0123456789abcdef.meta.parquet"}, "sha256": {}}))
    assert recall_pack.load(wh, "gading") is None  # never read as this layout
    night(home)
    assert json.loads(path.read_text()) == old
    assert not list(folder.glob("0123456789abcdef.*")) and recall_pack.load(wh, "gading") is not None


def test_loading_a_long_history_raises_the_open_files_limit_it_needs_up_to_the_hard_limit():
    import subprocess
    import sys

    code = (
        "import resource\n"
        "from flows.store import recall_pack\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))\n"
        "recall_pack._room_for_files(recall_pack.FILES_HELD * 120)  # ten years of months\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True).stdout
    soft, hard = (int(x) for x in out.split())
    wanted = 8 * 120 + 64  # the files the months keep open, beyond the 64 allowed
    assert soft >= wanted if hard < 0 or hard >= wanted else soft == hard  # -1: no hard limit
