"""The Indonesian evaluation set (benchmarks/data/) and the summary benchmark's scoring helpers.

Fast: the hand-written dialogues and the helpers only. DialogSum (CC BY-NC-SA, evaluation
only) is read by the benchmark alone, never here.
"""

from __future__ import annotations

import pytest

from benchmarks.summary_quality import (
    INDONESIAN,
    content_recall,
    content_words,
    indonesian_day,
    indonesian_dialogues,
    indonesian_figures,
    item_matches,
    item_scores,
    match_items,
)

DIALOGUES = indonesian_dialogues()


def test_the_data_file_says_it_was_written_for_kenangs_evaluation():
    head = INDONESIAN.read_text(encoding="utf-8").splitlines()[:3]
    assert any("written by hand for kenang's evaluation" in line for line in head)
    assert any("Same license as the kenang repository" in line for line in head)


def test_the_set_holds_thirty_dialogues_with_unique_ids():
    assert len(DIALOGUES) == 30
    assert len({d["id"] for d in DIALOGUES}) == 30


@pytest.mark.parametrize("dialogue", DIALOGUES, ids=[d["id"] for d in DIALOGUES])
def test_each_dialogue_has_turns_a_reference_and_marked_items(dialogue):
    turns = dialogue["turns"]
    assert 6 <= len(turns) <= 20
    assert {t["role"] for t in turns} == {"user", "assistant"}
    assert all(isinstance(t["text"], str) and t["text"].strip() for t in turns)
    assert isinstance(dialogue["reference"], str) and content_words(dialogue["reference"])
    for key in ("decisions", "open_items"):
        items = dialogue[key]
        assert isinstance(items, list)
        assert all(isinstance(i, str) and content_words(i) for i in items)


def test_the_set_has_days_without_decisions_and_days_without_open_items():
    assert any(not d["decisions"] for d in DIALOGUES)
    assert any(not d["open_items"] for d in DIALOGUES)
    assert any(len(d["open_items"]) >= 2 for d in DIALOGUES)
    assert any(len(d["decisions"]) >= 3 for d in DIALOGUES)


def test_a_named_users_dialogue_becomes_a_day_of_that_user():
    named = next(d for d in DIALOGUES if d.get("user") == "Bu Rina")
    day = indonesian_day(named, 3)
    assert day.user_id == "bu-rina"
    assert [m.content for m in day.messages] == [t["text"] for t in named["turns"]]
    assert len({m.ts for m in day.messages}) == len(named["turns"])


def test_content_words_are_stemmed_and_leave_stop_words_out():
    words = content_words("Dia sudah mengganti disk yang rusak dengan disknya yang baru")
    assert "disk" in words
    assert not {"dia", "sudah", "yang", "dengan"} & words


def test_a_note_that_is_the_reference_recalls_all_of_it_and_an_empty_one_none():
    ref = DIALOGUES[0]["reference"]
    assert content_recall(ref, ref) == 1.0
    assert content_recall("", ref) == 0.0


def test_a_found_item_matches_when_it_shares_half_of_the_reference_items_words():
    assert item_matches("ganti disk sdb", "ganti disk sdb dengan WD Red Plus")  # 3 of 6
    assert not item_matches("ganti disk", "ganti disk sdb dengan WD Red Plus")  # 2 of 6
    assert not item_matches("", "cek garansi disk lama")


def test_each_reference_item_is_matched_once():
    assert match_items(["cek garansi disk", "cek garansi disk lama"], ["cek garansi disk lama"]) == 1


def test_a_perfect_prediction_scores_one_and_an_empty_one_zero():
    pairs_perfect = [(d["open_items"], d["open_items"]) for d in DIALOGUES]
    pairs_empty = [((), d["open_items"]) for d in DIALOGUES]
    perfect, empty = item_scores(pairs_perfect), item_scores(pairs_empty)
    assert (perfect["precision"], perfect["recall"]) == (1.0, 1.0)
    assert (empty["precision"], empty["recall"]) == (0.0, 0.0)
    assert item_scores([((), ())]) == {"precision": 1.0, "recall": 1.0, "matched": 0, "found": 0, "reference": 0}


def test_items_found_where_none_were_marked_score_zero_precision():
    assert item_scores([(("beli baterai",), ())])["precision"] == 0.0


def test_the_indonesian_set_runs_through_the_extractive_note():
    figures = indonesian_figures(DIALOGUES[:3])
    assert figures["dialogues"] == 3
    assert 0.0 <= figures["content_recall"] <= 1.0
    assert [p["id"] for p in figures["per_dialogue"]] == [d["id"] for d in DIALOGUES[:3]]
    assert figures["open_items"]["reference"] == sum(len(d["open_items"]) for d in DIALOGUES[:3])
