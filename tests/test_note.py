"""The extractive note reads as a note: threads, who did what, a title, decisions and open items.

Hand-made days in both languages pin each rule; Hypothesis checks the bounds on any text.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.frontmatter import ITEM_BOUNDS, SUMMARY_PARAGRAPHS, TITLE_MAX_CHARS
from transforms.digest import units
from transforms.extract import DayMessage, DayText
from transforms.frontmatter import normalise_items, normalise_summary, normalise_title
from transforms.note import threads, write_note

WIB = timezone(timedelta(hours=7))
DAY = date(2026, 7, 19)


def at(hhmm: str) -> datetime:
    return datetime.combine(DAY, time(int(hhmm[:2]), int(hhmm[3:])), tzinfo=WIB)


def msg(content: str, role: str = "user", ts: str = "10:00", session: str = "s1") -> DayMessage:
    return DayMessage(session, role, content, at(ts))


def day_of(*messages: DayMessage, user: str = "dimas") -> DayText:
    return DayText(user, DAY, WIB, tuple(messages))


ZFS = day_of(
    msg("Hey, good morning!", ts="08:00"),
    msg("Dimas here. How do I replace a failing ZFS disk in my mirror pool?", ts="08:01"),
    msg("Run `zpool replace tank sdb sdc` and watch the resilver with `zpool status`.", "assistant", "08:02"),
    msg("I started the resilver and it finished without errors.", ts="08:30"),
    msg("Great, the mirror is healthy again.", "assistant", "08:31"),
    msg("Thanks a lot!", ts="08:32"),
)

SOURDOUGH = (
    msg("Dimas wants to bake sourdough bread this weekend with rye flour.", ts="19:00", session="s2"),
    msg("Feed the sourdough starter twice before baking; rye flour ferments faster.", "assistant", "19:01", "s2"),
)

GADING = day_of(
    msg("Gading di sini. Gimana cara ganti disk ZFS yang rusak di pool mirror?", ts="09:00"),
    msg("Jalankan `zpool replace tank sdb sdc`, lalu pantau resilver dengan `zpool status`.", "assistant", "09:01"),
    msg("Oke makasih ya!", ts="09:02"),
    user="gading",
)


def test_a_note_names_who_did_what_in_the_third_person():
    note = write_note(ZFS)
    assert note is not None and note.language == "en"
    assert note.summary.startswith("Dimas asked how to replace a failing ZFS disk in Dimas's mirror pool")
    assert "the assistant suggested running `zpool replace tank sdb sdc`" in note.summary
    assert " I " not in f" {note.summary} " and " my " not in f" {note.summary} "


def test_greetings_and_thanks_never_reach_the_note():
    note = write_note(ZFS)
    assert note is not None
    for filler in ("good morning", "Thanks a lot", "Great, the mirror"):
        assert filler.lower() not in note.summary.lower()
    assert "Oke makasih" not in (write_note(GADING) or note).summary


def test_an_indonesian_day_is_written_in_indonesian():
    note = write_note(GADING)
    assert note is not None and note.language == "id"
    assert note.summary.startswith("Gading bertanya cara ganti disk ZFS")
    assert "asisten menyarankan jalankan `zpool replace tank sdb sdc`" in note.summary
    assert "menulis:" not in note.summary and "Pengguna menulis" not in note.summary


def test_each_session_is_a_thread_with_its_own_paragraph():
    day = day_of(*ZFS.messages, *SOURDOUGH)
    note = write_note(day)
    assert note is not None
    paragraphs = note.summary.split("\n\n")
    assert len(paragraphs) == 2
    assert "ZFS" in paragraphs[0] and "sourdough" in paragraphs[1]


def test_a_long_pause_or_a_change_of_topic_splits_a_session_into_threads():
    zfs = [
        msg(f"The ZFS pool tank reports checksum errors on disk {d} after the scrub.", ts=f"08:{i:02d}")
        for i, d in enumerate("abcdefghijkl")
    ]
    bread = [
        msg(f"Sourdough bread with rye flour needs a {n} hour proof in the kitchen.", ts=f"08:{20 + i:02d}")
        for i, n in enumerate(range(2, 14))
    ]
    assert len(threads(units(day_of(*zfs, *bread)))) == 2
    later = [msg(m.content, ts=f"1{i}:00") for i, m in enumerate(zfs[:2])]
    assert len(threads(units(day_of(*zfs[:2], *later)))) == 3  # the 08:00–08:01 pair, then two hours apart


def test_a_pasted_chat_keeps_its_speakers_tokens_and_resolves_you_to_the_other_one():
    day = day_of(
        msg("#Person1#: You're finally here! What took so long?", ts="09:00"),
        msg("#Person2#: I got stuck in traffic again near the central station.", ts="09:01"),
        msg("#Person1#: You should start taking the train to work instead.", ts="09:02"),
        msg("#Person2#: I will try the train tomorrow morning.", ts="09:03"),
    )
    note = write_note(day)
    assert note is not None
    assert "#Person1# said #Person2# is finally here" in note.summary  # "You're" is the other speaker
    assert "#Person2# got stuck in traffic again" in note.summary  # "I" is the speaker
    assert " I " not in note.summary and "You" not in note.summary


def test_the_title_says_what_the_day_was_about_in_one_line():
    note = write_note(day_of(*ZFS.messages, *SOURDOUGH))
    assert note is not None
    assert "ZFS" in note.title and "rye" in note.title.lower()
    assert "\n" not in note.title and len(note.title) <= TITLE_MAX_CHARS


def test_decisions_and_open_items_come_from_cues_in_the_third_person():
    day = day_of(
        msg("Jadi kita pakai restic untuk backup ke NAS, sudah diputuskan.", ts="10:00"),
        msg("Bagus, restic cocok untuk backup terenkripsi ke NAS.", "assistant", "10:01"),
        msg("Restore test-nya belum jalan, nanti saya cek minggu depan.", ts="10:02"),
        msg("Siap, catat supaya tidak lupa cek restore-nya.", "assistant", "10:03"),
        user="gading",
    )
    note = write_note(day)
    assert note is not None
    assert any("restic" in d for d in note.decisions)
    assert any("restore test-nya belum jalan" in o.lower() for o in note.open_items)
    assert not any("nanti saya" in o for o in note.open_items)  # "saya" is the speaker


def test_a_question_nobody_answered_is_an_open_item():
    day = day_of(
        msg("The Proxmox backup job fails every night with a timeout on the NAS share.", ts="21:00"),
        msg("Check the NFS mount options and raise the timeout in the storage config.", "assistant", "21:01"),
        msg("Should I move the backup window to the early morning instead?", ts="21:05"),
    )
    note = write_note(day)
    assert note is not None
    assert note.open_items == (
        "The user asked whether the user should move the backup window to the early morning instead.",
    )


def test_an_item_is_one_sentence_that_names_its_speaker_once():
    day = day_of(
        msg("TODO: check the restic snapshots on the NAS.", ts="21:00"),
        msg("Sure, run restic snapshots against the NAS repository.", "assistant", "21:01"),
    )
    note = write_note(day)
    assert note is not None and note.open_items == ("The user will check the restic snapshots on the NAS.",)


def test_a_short_reply_with_a_cue_is_an_item_that_says_what_it_is_about():
    day = day_of(
        msg("Dana darurat aku taruh di reksa dana pasar uang, sudah diputuskan.", ts="20:00"),
        msg(
            "BPJS kesehatan dari kantor udah cover rawat inap belum, kalau belum dananya harus lebih gede.", ts="20:01"
        ),
        msg("Itu tergantung kebijakan kantor, tanyakan ke bagian personalia.", "assistant", "20:02"),
        msg("oke nanti aku tanya HR", ts="20:03"),
    )
    note = write_note(day)
    assert note is not None
    [item] = note.open_items
    assert item.startswith("Pengguna akan tanya HR (") and "BPJS" in item and ":" not in item


def test_a_follow_up_joins_the_item_it_follows_and_a_later_fix_settles_an_item():
    day = day_of(
        msg("Test e2e export-nya masih merah di CI, timeout pas generate file gede.", ts="09:00"),
        msg("Coba kecilkan data uji untuk e2e, atau naikkan timeout khusus tes itu.", "assistant", "09:01"),
        msg("besok aku benerin", ts="09:02"),
        msg("Restore test backup restic ke NAS belum jalan.", ts="09:03"),
        msg("Cek password repository restic-nya dulu.", "assistant", "09:04"),
        msg("nah udah jalan, restore restic beres.", ts="09:05"),
    )
    note = write_note(day)
    assert note is not None
    [item] = note.open_items
    assert item.startswith("Pengguna besok akan benerin (") and "e2e" in item


def test_an_answered_question_and_the_assistants_own_promise_are_not_open():
    day = day_of(
        msg("Why does the Grafana alert for the NAS disk never fire?", ts="21:00"),
        msg("I'll explain: the alert rule has no contact point, so Grafana drops it.", "assistant", "21:01"),
    )
    note = write_note(day)
    assert note is not None and note.open_items == ()


def test_the_same_day_gives_the_same_note():
    assert write_note(ZFS) == write_note(ZFS)


def test_a_day_with_nothing_to_say_has_no_note():
    assert write_note(day_of(msg("Hi!"), msg("Hello, how can I help?", "assistant"))) is None


turn = st.tuples(
    st.sampled_from(["user", "assistant"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)
    | st.sampled_from(
        [
            "How do I restart the Docker daemon on Debian?",
            "Jadi kita pakai ZFS, sudah diputuskan. Nanti saya cek lagi?",
            "#Person1#: I'll call you tomorrow about the wedding.",
            "Nadia: my backup is still failing!!!\n\nSekar: you should use `restic check`.",
            "I" * 500,
        ]
    ),
    st.integers(min_value=0, max_value=23),
    st.sampled_from(["s1", "s2"]),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(turn, max_size=14))
def test_every_note_is_within_the_frontmatter_bounds(turns):
    day = day_of(*(msg(text, role, f"{h:02d}:00", sid) for role, text, h, sid in turns))
    note = write_note(day)
    if note is None:
        return
    assert normalise_summary(note.summary) == note.summary
    assert len(note.summary.split("\n\n")) <= SUMMARY_PARAGRAPHS
    assert normalise_title(note.title) == note.title
    assert normalise_items("decisions", note.decisions) == note.decisions
    assert normalise_items("open_items", note.open_items) == note.open_items
    assert len(note.open_items) <= ITEM_BOUNDS["open_items"][0]


def test_the_assistants_advice_for_a_case_is_not_an_open_item():
    day = day_of(
        msg("Scrub ZFS di pool tank selesai, tapi ada 3 data errors di disk sdc.", ts="08:00"),
        msg("Kalau belum punya backup file itu, pulihkan dulu dari snapshot ZFS terakhir.", "assistant", "08:01"),
        user="gading",
    )
    note = write_note(day)
    assert note is not None and note.open_items == ()


def test_an_indonesian_instruction_is_written_as_advice():
    day = day_of(
        msg("Disk sdc di pool tank kena CKSUM errors setelah scrub ZFS semalam.", ts="08:00"),
        msg("Perhatikan kolom CKSUM per disk, lalu ganti kabel SATA disk sdc.", "assistant", "08:01"),
        user="gading",
    )
    note = write_note(day)
    assert note is not None
    assert "asisten menyarankan perhatikan kolom CKSUM per disk" in note.summary


def test_chat_particles_and_emoji_are_left_out_of_the_note():
    day = day_of(
        msg("Pool ZFS aku statusnya DEGRADED nih, sdb FAULTED 😅", ts="08:00"),
        msg("Cek SMART disk sdb dulu pakai `smartctl -a /dev/sdb`, lalu ganti disk-nya.", "assistant", "08:01"),
        user="gading",
    )
    note = write_note(day)
    assert note is not None
    assert "DEGRADED, sdb FAULTED" in note.summary
    assert " nih" not in note.summary and "😅" not in note.summary


def test_a_plan_with_its_time_is_listed_once_as_still_to_do():
    day = day_of(
        msg("Mau akses Home Assistant dari luar tanpa buka port. Tailscale cukup?", ts="10:00"),
        msg("Cukup. Pasang Tailscale di satu mesin di LAN sebagai subnet router.", "assistant", "10:01"),
        msg("Oke, lusa aku setting buat Bu Ani, jadi pakai Tailscale aja.", ts="10:02"),
        user="gading",
    )
    note = write_note(day)
    assert note is not None
    assert any("Bu Ani" in o for o in note.open_items)
    assert not any("Bu Ani" in d for d in note.decisions)
