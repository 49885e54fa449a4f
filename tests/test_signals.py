"""Fields a reader can trust: importance and mood from deterministic signals, and no placeholder as a fact.

``day_signals`` reads the user's own words in both languages: problems (errors, data
loss, incidents), deadlines, relief and thanks. Each row of a table is one day; the
bounds it gives a model are checked as well. Placeholders an importer writes
(``[empty message]``, ``[image]``, ...) must never become a tag, a person or a project.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import pytest
from helpers import NOW, drop, md, table

from flows.pipeline import nightly
from schemas.frontmatter import IMPORTANCE_MAX, MOODS
from schemas.lexicon import PLACEHOLDERS
from transforms.extract import (
    DayMessage,
    DayText,
    day_signals,
    extract_importance,
    extract_mood,
    extract_people,
    extract_projects,
    extract_tags,
    is_placeholder,
)
from transforms.frontmatter import normalise_list, parse_summary

WIB = timezone(timedelta(hours=7))
DAY = date(2026, 7, 19)


def day(*turns: str) -> DayText:
    """A day of one session; a turn starting with "A: " is the assistant's, any other the user's."""
    messages = tuple(
        DayMessage(
            "s1",
            "assistant" if t.startswith("A: ") else "user",
            t.removeprefix("A: "),
            datetime.combine(DAY, time(10, i % 60), tzinfo=WIB),
        )
        for i, t in enumerate(turns)
    )
    return DayText("gading", DAY, WIB, messages)


# --- importance -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turns", "at_least"),
    [
        (("Scrub ZFS selesai, tapi ada 'errors: 3 data errors'. Harus ngapain?",), 6),
        (("My weekly scrub finished with checksum errors on one disk.",), 6),
        (("Backup gagal lagi semalam.",), 6),
        (("The nightly backup failed and the pool is DEGRADED.",), 6),
        (("Server down dari pagi, semua layanan mati.",), 5),
        (("We had an outage on the home network.",), 5),
        (("Deploy-nya gagal.",), 3),
        (("The build failed.",), 3),
        (("cat: Error: no such file or directory",), 3),
        (("Laptop kantor rusak.",), 3),
        (("Kunci motor hilang.",), 3),
        (("Deadline besok, belum mulai.",), 3),
        (("The report is due tomorrow.",), 3),
    ],
)
def test_a_day_that_reports_a_problem_is_never_importance_one(turns, at_least):
    assert extract_importance(day(*turns)) >= at_least


@pytest.mark.parametrize(
    "text",
    [
        "zpool status bilang 'No known data errors', aman.",
        "errors: No known data errors",
        "Nggak ada error lagi, semua hijau.",
        "Build passed with 0 errors.",
        "Jangan sampai gagal ya, hehe.",
    ],
)
def test_a_negated_problem_raises_nothing(text):
    signals = day_signals(day(text))
    assert signals.importance == 1
    assert not [r for r in signals.reasons if r.split(":")[0] in ("failure", "data_loss", "incident")]


def test_the_assistants_words_raise_no_signal():
    assert (
        day_signals(day("Gimana cara ganti disk?", "A: Kalau scrub gagal atau ada data errors, cek kabel.")).reasons
        == ()
    )


def test_the_reasons_name_each_signal_once_in_order_of_first_mention():
    signals = day_signals(
        day("Deploy gagal, gagal lagi.", "Ada data errors juga.", "Akhirnya berhasil, makasih banyak!")
    )
    assert signals.reasons == (
        "failure: gagal",
        "data_loss: data errors",
        "relief: akhirnya berhasil",
        "thanks: makasih banyak",
    )


def test_decisions_and_problems_count_toward_importance_together():
    # 1 + two markers (sepakat, gagal) = 3; the failure's floor is 3 too
    assert extract_importance(day("Kami sepakat pindah, tapi deploy gagal.")) == 3


# --- mood -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turns", "mood"),
    [
        # a problem sorted out: the day ends in relief or thanks, not in frustration
        (("Error lagi, gagal terus, kesel.", "Akhirnya berhasil! Makasih banyak."), "productive"),
        (("Docker-nya error, kesel banget.", "Oke sudah jalan, makasih banyak!"), "grateful"),
        (("The build keeps failing, so annoying.", "Fixed it, thanks a lot!"), "productive"),
        (("Kesel, nginx error terus.", "Makasih banyak ya 🙏"), "grateful"),
        # a problem left open: never cheerful
        (("Scrub ZFS selesai, tapi ada 'errors: 3 data errors'. Mantap 😂",), "anxious"),
        (("The scrub found data errors. Great, haha.",), "anxious"),
        (("Server down dari pagi, hehe.",), "stressed"),
        (("Deploy gagal. Build juga gagal.",), "frustrated"),
        (("Backup gagal, makasih.",), "frustrated"),  # thanks answer a failure, not lost data
        (("Error lagi, capek.",), "tired"),
        # anger after the fix still counts, however long the laugh before it
        (("Error lagi.", "wkwkwkwkwkwkwkwkwkwk fixed, kesel, sebel"), "frustrated"),
        # no problem: the mood words decide, as before
        (("Capek banget, ngantuk juga.",), "tired"),
        (("Deadline besok, pusing.",), "stressed"),
        (("Terima kasih banyak 🙏",), "grateful"),
        (("Nggak capek kok, santai.",), "calm"),
        (("Gak sabar, excited!",), "excited"),
        (("How do I handle errors in Python?",), "neutral"),
        (("Oke.",), "neutral"),
    ],
)
def test_the_mood_follows_the_days_signals_in_both_languages(turns, mood):
    assert extract_mood(day(*turns)) == mood


def test_a_day_reporting_zfs_data_errors_is_never_happy_whatever_the_laughter():
    zfs = day("Scrub ZFS di pool tank selesai, tapi ada 'errors: 3 data errors'. Panik dikit 😅", "Haha iya, mantap.")
    signals = day_signals(zfs)
    assert signals.mood == "anxious"
    assert signals.importance >= 6
    assert "happy" not in signals.moods and "grateful" not in signals.moods
    assert signals.bound_mood("happy") == "anxious"


# --- the bounds a model is held to ------------------------------------------------------


def test_a_model_may_move_importance_two_steps_but_never_below_the_floor():
    signals = day_signals(day("Backup gagal, ada data errors."))
    low, high = signals.importance_range
    assert low == 6 <= signals.importance <= high <= IMPORTANCE_MAX
    assert signals.bound_importance(1) == 6
    assert signals.bound_importance(10) == min(IMPORTANCE_MAX, signals.importance + 2)


@pytest.mark.parametrize(
    ("turns", "allowed", "refused"),
    [
        (("Oke.",), set(MOODS), set()),
        (("Error lagi, gagal, kesel.", "Akhirnya berhasil, makasih banyak!"), {"grateful", "tired"}, {"frustrated"}),
        (("Deploy gagal, gagal lagi.",), {"frustrated", "tired", "curious"}, {"happy", "grateful", "calm"}),
        (("Mantap, seneng banget.",), {"happy", "neutral", "grateful"}, {"sad", "frustrated"}),
        (("Sedih, kecewa.",), {"sad", "neutral", "tired"}, {"happy", "excited"}),
    ],
)
def test_the_moods_a_model_may_choose_stay_on_the_signals_side(turns, allowed, refused):
    moods = set(day_signals(day(*turns)).moods)
    assert allowed <= moods and not refused & moods
    assert day_signals(day(*turns)).mood in moods


# --- placeholders -----------------------------------------------------------------------

PLACEHOLDER_DAY = day(
    "[empty message]",
    "A: [empty message]",
    "[image]",
    "[attachment: scan.pdf]",
    "[tool call]",
    "A: [tool_use Bash] done",
    "[tether_quote]",
    "[empty message] [image] [Empty Message]",
)


def test_placeholders_are_never_tags_people_or_projects():
    assert extract_tags(PLACEHOLDER_DAY) == ()
    assert extract_people(PLACEHOLDER_DAY) == ()
    assert extract_projects(PLACEHOLDER_DAY, known=("Image",)) == ()


def test_a_placeholder_beside_real_words_leaves_the_real_words():
    text = "[image] Homelab pakai Proxmox. [empty message] Homelab lagi."
    tags = extract_tags(day(text, "[attachment] Homelab Proxmox lagi."))
    assert "proxmox" in tags and "homelab" in tags
    assert not {"empty", "message", "image", "attachment"} & set(tags)


@pytest.mark.parametrize(
    ("item", "placeholder"),
    [
        ("[empty message]", True),
        ("empty-message", True),
        ("Empty message", True),
        ("[image]", True),
        ("[attachment: scan.pdf]", True),
        ("tool call", True),
        ("[tether_browsing_display]", True),
        ("image", False),  # a docker image is a topic; the bare word is not a placeholder
        ("Dimas", False),
        ("proxmox", False),
    ],
)
def test_is_placeholder_knows_what_importers_write(item, placeholder):
    assert is_placeholder(item) is placeholder


@pytest.mark.parametrize(
    ("field", "items", "kept"),
    [
        ("tags", ["[empty message]", "empty-message", "Empty Message", "proxmox"], ("proxmox",)),
        ("people", ["[image]", "Dimas", "[attachment: ktp.jpg]"], ("Dimas",)),
        ("projects", ["[tool call]", "tool_use", "Homelab"], ("Homelab",)),
    ],
)
def test_a_models_lists_lose_their_placeholders_too(field, items, kept):
    # every list a note holds, the model's included, goes through normalise_list
    assert normalise_list(field, items) == kept


def test_every_listed_placeholder_in_brackets_is_a_placeholder():
    assert all(is_placeholder(f"[{p}]") for p in PLACEHOLDERS)


# --- people: the transcript's own, the configured name, through a real night ---------------


@pytest.mark.usefixtures("prefect_api")
def test_a_nights_note_holds_the_people_the_transcript_declares_and_the_users_configured_name(home):
    config = home.paths.config_file
    config.write_text(config.read_text().replace("names: {}", "names: {gading: Gading Nasution}"))
    transcript = md(
        "2026-07-19",
        "1037",
        ("user", "Pagi! Ganti disk ZFS yang rusak di pool tank. [image]"),
        ("assistant", "Oke, jalankan zpool replace lalu tunggu resilver."),
        ("user", "[empty message]"),
        ("user", "Resilver selesai, akhirnya berhasil. Makasih banyak!"),
        session_id="2026-07-19-1037",
        user_id="gading",
    ).replace(b"user_id: gading\n", b"user_id: gading\npeople: [Dimas Pratama, '[[Sari]]', '[empty message]']\n")
    drop(home, "gading/2026-07-19-1037.md", transcript)
    nightly(now=NOW, home=str(home.paths.home))

    session = table(home, "sessions")[0]
    assert session["people"] == ["Dimas Pratama", "[[Sari]]", "[empty message]"]
    doc = parse_summary((home.paths.archive / "daily_sessions/2026-07-19/gading/2026-07-19.summary.md").read_text())
    assert doc.people[:3] == ("Gading Nasution", "Dimas Pratama", "Sari")
    assert not [p for p in doc.people if is_placeholder(p)]
    assert not {"empty", "message", "image", "empty-message"} & set(doc.tags)
    assert "Gading Nasution" in doc.summary
    assert doc.mood != "frustrated" and doc.importance >= 3  # a failing disk, replaced and thanked for
