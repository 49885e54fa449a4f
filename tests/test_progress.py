"""Progress of long work: what the CLI prints while a stage runs, counts only."""

from __future__ import annotations

import numpy as np
from fakes import HashEmbedder

from flows.stages import progress, recall_index


class Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed_passages(self, texts):
        self.calls.append(len(texts))
        return super().embed_passages(texts)


def test_embedding_many_new_chunks_reports_every_batch_and_gives_the_same_vectors():
    """An import of a big log embeds for minutes: the CLI hears of it every PROGRESS_CHUNKS chunks."""
    seen = []
    texts = [f"chunk {i} tentang ZFS scrub dan kabel SATA nomor {i}" for i in range(150)]
    e = Counting()
    progress.set_reporter(lambda stage, done, total, files, elapsed, unit: seen.append((stage, done, total, unit)))
    try:
        got = recall_index.embed_reporting(e, texts)
    finally:
        progress.set_reporter(None)
    n = recall_index.PROGRESS_CHUNKS
    assert e.calls == [n, n, 150 - 2 * n]
    assert seen == [("embed", n, 150, "chunks"), ("embed", 2 * n, 150, "chunks"), ("embed", 150, 150, "chunks")]
    assert np.array_equal(got, HashEmbedder().embed_passages(texts))
    # a night's few new chunks: one call, no report
    seen.clear()
    assert np.array_equal(recall_index.embed_reporting(e, texts[:10]), HashEmbedder().embed_passages(texts[:10]))
    assert e.calls[-1] == 10 and seen == []
    assert progress.line("embed", 64, 150, 0, 32.0, "chunks") == "embed: 64/150 chunks, 0.5 s per chunk"
