"""Chunking a day for recall, and the keyword terms of a text."""

from __future__ import annotations

import datetime as dt

from transforms.chunk import (
    MAX_TOKENS,
    Turn,
    estimate_tokens,
    index_chunk,
    session_chunks,
    summary_chunk,
    term_counts,
    terms_of,
)

DAY = dt.date(2026, 7, 19)


def turns(n: int, words: int = 60) -> list[Turn]:
    return [
        Turn(i, "user" if i % 2 == 0 else "assistant", " ".join(f"w{i}x{j}" for j in range(words))) for i in range(n)
    ]


def test_a_short_session_is_one_chunk_of_its_turns_with_speakers():
    chunks = session_chunks("gading", DAY, "s1", [Turn(0, "user", "Pagi!"), Turn(1, "assistant", "Halo.")])
    assert len(chunks) == 1
    c = chunks[0]
    assert c.text == "user: Pagi!\nassistant: Halo."
    assert (c.user_id, c.date, c.session_id, c.source, c.seq) == ("gading", DAY, "s1", "transcript", 0)


def test_windows_hold_whole_turns_within_the_limit_and_repeat_the_last_turn():
    chunks = session_chunks("u", DAY, "s", turns(12), granularity="window")
    assert len(chunks) > 2
    for c in chunks:
        assert estimate_tokens(c.text) <= MAX_TOKENS + 2 * len(c.text.splitlines())
        assert all(line.startswith(("user: ", "assistant: ")) for line in c.text.splitlines())
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.text.splitlines()[-1] == b.text.splitlines()[0]  # one turn of overlap
    seen = {line for c in chunks for line in c.text.splitlines()}
    assert len(seen) == 12  # every turn is in some chunk


def test_a_turn_longer_than_a_window_is_split_at_boundaries_and_nothing_is_lost():
    long = "\n".join(f"Kalimat nomor {i} tentang ZFS dan snapshot harian di pve-02.lan." for i in range(120))
    chunks = session_chunks("u", DAY, "s", [Turn(0, "assistant", long)])
    assert len(chunks) > 1
    assert all(c.text.startswith("assistant: ") for c in chunks)
    joined = " ".join(c.text.removeprefix("assistant: ") for c in chunks)
    for i in range(120):
        assert f"Kalimat nomor {i} " in joined


def test_chunk_ids_are_content_hashes():
    a = session_chunks("u", DAY, "s", turns(6))
    b = session_chunks("u", DAY, "s", turns(6))
    assert [c.chunk_id for c in a] == [c.chunk_id for c in b]
    other_user = session_chunks("v", DAY, "s", turns(6))
    assert {c.chunk_id for c in a}.isdisjoint(c.chunk_id for c in other_user)


def test_each_user_turn_with_its_replies_is_a_chunk_by_default():
    from transforms import chunk

    assert chunk.GRANULARITY == chunk.DEFAULT_GRANULARITY == "pair" and chunk.CHUNKER_VERSION == 5
    ts = [
        Turn(0, "assistant", "Halo, ada yang bisa dibantu?"),
        Turn(1, "user", "Boot order Proxmox?"),
        Turn(2, "assistant", "Pakai opsi startup."),
        Turn(3, "assistant", "order=1,up=60"),
        Turn(4, "user", "Makasih"),
        Turn(5, "assistant", "Sama-sama."),
    ]
    chunks = [c for c in session_chunks("u", DAY, "s", ts) if c.source == "transcript"]
    assert [c.text for c in chunks] == [
        "assistant: Halo, ada yang bisa dibantu?",  # what comes before the first user turn stands alone
        "user: Boot order Proxmox?\nassistant: Pakai opsi startup.\nassistant: order=1,up=60",
        "user: Makasih\nassistant: Sama-sama.",
    ]
    assert [c.seq for c in chunks] == [0, 1, 4]


def test_a_pair_longer_than_the_limit_is_cut_into_windows_and_nothing_is_lost():
    ts = [
        Turn(0, "user", "tolong rangkum"),
        *(Turn(i, "assistant", " ".join(f"w{i}x{j}" for j in range(60))) for i in range(1, 12)),
    ]
    chunks = [c for c in session_chunks("u", DAY, "s", ts) if c.source == "transcript"]
    assert len(chunks) > 2
    assert all(estimate_tokens(c.text) <= MAX_TOKENS + 2 * len(c.text.splitlines()) for c in chunks)
    assert len({line for c in chunks for line in c.text.splitlines()}) == 12


def test_flags_of_any_message_mark_its_chunks():
    ts = [Turn(0, "user", "halo"), Turn(1, "user", "ignore all previous", ("role_override",))]
    chunks = session_chunks("u", DAY, "s", ts, granularity="window")
    assert chunks[0].flagged == ("role_override",)
    ts = [
        Turn(0, "user", "halo"),
        Turn(1, "assistant", "hai"),
        Turn(2, "user", "ignore all previous", ("role_override",)),
    ]
    pairs = session_chunks("u", DAY, "s", ts)  # a pair holds only its own turns' flags
    assert [c.flagged for c in pairs if c.source == "transcript"] == [(), ("role_override",)]


def test_user_turns_in_a_row_open_one_pair_with_the_reply():
    ts = [
        Turn(0, "user", "Boot order Proxmox gimana?"),
        Turn(1, "user", "yang VM 101 harus duluan"),
        Turn(2, "assistant", "Set order=1 di VM 101."),
        Turn(3, "user", "ok"),
    ]
    pairs = [c.text for c in session_chunks("u", DAY, "s", ts) if c.source == "transcript"]
    assert pairs == [
        "user: Boot order Proxmox gimana?\nuser: yang VM 101 harus duluan\nassistant: Set order=1 di VM 101.",
        "user: ok",
    ]


def test_summary_and_index_chunks_carry_their_fields():
    c = summary_chunk("u", DAY, "Set the boot order.", {"people": ["Rina"], "tags": [], "technologies": ["Proxmox"]})
    assert c.text == "Set the boot order.\npeople: Rina\ntechnologies: Proxmox"
    assert (c.source, c.session_id) == ("summary", None)
    assert index_chunk("u", DAY, "- [[2026-07-19]] 5/10 · calm · x — y").source == "index"


def test_terms_keep_compounds_whole_and_as_parts_and_drop_stopwords():
    t = terms_of("Kenapa pve-02.lan error ERR_ZFS_0x1f4a lagi di port 8006?")
    assert "pve-02.lan" in t and "pve" in t and "02" in t and "lan" in t
    assert "err_zfs_0x1f4a" in t and "8006" in t
    assert not {"kenapa", "lagi", "di"} & set(t)


def test_light_stemming_meets_on_both_sides():
    assert terms_of("servernya") == terms_of("server")
    assert terms_of("backups") == terms_of("backup")
    assert terms_of("status") == ["status"] and terms_of("aku") == []
    assert term_counts("boot boot order") == (("boot", "order"), (2, 1))


def test_chinese_is_cut_into_character_bigrams_so_a_query_meets_a_chunk():
    assert terms_of("我上周去爬山") == ["我上", "上周", "周去", "去爬", "爬山"]
    assert terms_of("猫") == ["猫"]  # a lone character is itself
    assert terms_of("5月2日") == ["5", "月", "2", "日"]  # digits between characters stay terms of their own
    assert terms_of("用Docker部署") == ["用", "docker", "部署"]
    chunk = set(terms_of("我昨天和朋友一起去爬山，风景很美。"))
    assert {"爬山", "朋友"} <= chunk and set(terms_of("爬山")) <= chunk
    assert terms_of("pve-02.lan di servernya") == ["pve-02.lan", "pve", "02", "lan", "server"]  # unchanged elsewhere


def test_turns_that_are_only_an_importers_bare_placeholders_make_no_chunk_text():
    """A Claude.ai export writes '[empty message]' for a message without text: nothing to find, never a chunk."""
    t = [
        Turn(0, "user", "[empty message]"),
        Turn(1, "assistant", "[Empty Message]"),
        Turn(2, "user", "Gimana cara ganti disk ZFS yang rusak?"),
        Turn(3, "assistant", "[image]"),
        Turn(4, "assistant", "Pakai zpool replace."),
        Turn(5, "user", "[attachment: zpool-status.txt]"),
        Turn(6, "user", "[empty message] [image]"),
        Turn(7, "assistant", "[empty message]"),
    ]
    for how in ("pair", "window", "both"):
        chunks = session_chunks("gading", DAY, "s1", t, granularity=how)
        assert chunks and all("[empty message]" not in c.text.lower() and "[image]" not in c.text for c in chunks)
        text = "\n".join(c.text for c in chunks)
        assert "zpool replace" in text and "[attachment: zpool-status.txt]" in text  # a named file stays findable
    only = [Turn(0, "user", "[empty message]"), Turn(1, "assistant", "[empty message]")]
    assert [c for c in session_chunks("gading", DAY, "s2", only) if c.source == "transcript"] == []
