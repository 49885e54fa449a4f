"""The cue tables: decisions, open items and things done, found in Indonesian and English sentences; first-person
pronouns resolved to the speaker; a later sentence closing an open item.

One row per cue phrase (it must fire) and rows that must not fire, in both languages; the functions never raise
on any text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas import cues as table
from transforms.cues import KINDS, as_third_person, closes, content_terms, cues_of

DECISIONS = [
    # Indonesian, formal and colloquial
    "Sudah diputuskan, backup pakai restic.",
    "Udah diputusin, kita ke Bandung hari Sabtu.",
    "Jadi kita pakai ZFS mirror.",
    "Jadi aku pakai Proxmox aja.",
    "Jadi gue beli yang 4TB.",
    "Kita sepakat pakai VLAN terpisah buat IoT.",
    "Oke, disepakati jam 7 pagi.",
    "Fix pakai Tailscale.",
    "Fix berangkat Jumat malam.",
    "Akhirnya pilih Synology DS224+.",
    "Akhirnya aku pilih yang bekas.",
    "Aku memutuskan pindah ke Jellyfin.",
    "Keputusannya: pakai WireGuard.",
    "Oke deh, aku ambil paket yang 50 Mbps.",
    "Ya udah kita pakai Home Assistant OS.",
    "Pakai restic aja deh.",
    "Aku tetap pakai ext4 di disk boot.",
    "Oke, deal.",
    "Saya setuju, kita mulai minggu depan.",
    "Udah fix, aku ambil cuti tanggal 12.",
    # a choice in passing, as a reply
    "Restic aja deh.",
    "Pakai yang 2TB aja, biar hemat.",
    "Oke, retensi 30 hari.",
    "Pake santan kelapa asli.",
    "Tracker-nya tetep aku blok.",
    # English
    "We decided to keep the old router.",
    "I've decided on the 8TB drives.",
    "We'll go with restic for the offsite copy.",
    "Let's go with Caddy.",
    "Let's use Tailscale for remote access.",
    "I'll stick with Debian on the NAS.",
    "We settled on a weekly scrub.",
    "I chose the Intel N100 board.",
    "We're going with btrfs after all.",
    "Agreed, raidz2 it is.",
    "The plan is to migrate on Saturday.",
    "I'm switching to Podman.",
]
OPEN_ITEMS = [
    # promises, Indonesian
    "Nanti saya cek log-nya.",
    "Nanti aku coba ganti kabelnya.",
    "Ntar gue tanya ke Dimas.",
    "Besok aku coba lagi.",
    "Besok saya telepon Bu Rina.",
    "Gue cek dulu ya.",
    "Aku mau pasang UPS minggu ini.",
    "Saya akan hubungi ISP-nya.",
    "Ingetin aku bayar listrik tanggal 20.",
    "Jangan lupa perpanjang domain.",
    "Habis ini aku backup dulu.",
    "Oke nanti beli baterai dulu.",
    "Nanti malem aku tes.",
    "Nanti Sabtu aku cek langsung ke sana.",
    "Upgrade-nya besok aja deh.",
    "Yang penting install dulu weekend ini.",
    "Besok pagi ke bengkel.",
    # promises, English
    "I'll look into it tomorrow.",
    "I'll check the SMART data tonight.",
    "I need to order a new PSU.",
    "I'm going to reflash the firmware.",
    "Remind me to renew the certificate.",
    "We'll need to revisit the firewall rules.",
    "Tomorrow I'll swap the disk.",
    "Don't forget to update the DNS record.",
    # to do
    "TODO: ganti pasta thermal.",
    "FIXME the cron job runs twice",
    "Masih harus beli kabel LAN.",
    "Tinggal pasang rak-nya.",
    "Bagian penjualan nyusul.",
    "I still need to label the cables.",
    # errors still standing
    "Masih error pas mount NFS.",
    "Backup-nya masih gagal.",
    "Scrub-nya tetep error.",
    "Belum bisa konek ke NAS.",
    "Container-nya belum jalan.",
    "Printernya belum dicek.",
    "Kabel SATA-nya belum diganti.",
    "Wifi di kamar masih lemot.",
    "Test e2e-nya masih merah di CI.",
    "Upload ke share SMB gagal terus.",
    "PR-nya belum di-review.",
    "Belum berani cabut listriknya.",
    "Disk kedua nggak kedetect.",
    "The scrub is still failing.",
    "The build keeps crashing on arm64.",
    "It doesn't work yet.",
    "The VPN is not working yet.",
    "Still getting checksum errors on sdb.",
    "We haven't fixed the DNS leak.",
    # unresolved
    "Aku belum tahu mau pakai apa.",
    "Gue belum yakin soal harganya.",
    "Masih bingung pilih SSD yang mana.",
    "Belum diputuskan mau liburan ke mana.",
    "Hmm aku pikir-pikir dulu.",
    "Not sure yet which UPS to buy.",
    "I haven't decided between Jellyfin and Plex.",
    "It's still unclear why the pool degraded.",
]
DONE = [
    "Sudah beres, makasih!",
    "Udah beres semua.",
    "Akhirnya berhasil!",
    "Restore-nya berhasil.",
    "Udah jalan sekarang.",
    "Sekarang sudah bisa login.",
    "Udah bisa konek lagi.",
    "Kabelnya sudah diganti.",
    "Tagihan listrik sudah dibayar.",
    "Udah gue cek, aman.",
    "Masalahnya sudah teratasi.",
    "Sekarang lancar.",
    "Udah nggak error lagi.",
    "Udah allow domain-nya, bisa login sekarang.",
    "Nah bisa!",
    "Works now, thanks!",
    "It works!",
    "Fixed it by reseating the cable.",
    "Solved: it was the MTU.",
    "The resilver is done.",
    "That did the trick.",
    "Everything is up and running.",
    "No more checksum errors.",
    "I replaced the fan yesterday.",
    "I've paid the invoice.",
]
NOT_CUES = [
    # Indonesian
    "Belum tentu itu masalahnya.",
    "Aku belum pernah ke Bali.",
    "Udah jalan belum?",
    "Sudah beres?",
    "Sudah dicoba atau belum?",
    "Udah bisa belum",
    "Kalau masih error, restart aja.",
    "Kalo udah beres, kabari ya.",
    "Harusnya sudah bisa sekarang.",
    "Saya jelaskan dulu cara kerjanya.",
    "Gimana cara pasang Proxmox?",
    "Terima kasih banyak ya.",
    "Aku lagi makan siang.",
    "Nggak apa-apa kok.",
    "Oke makasih.",
    "Oke, noted.",
    "Singkat aja.",
    "Reallocated 312, pending 48.",
    "Minyak 2L masih segitu gak sih sekarang?",
    # English
    "Let's see what the logs say.",
    "We'll see.",
    "I'll explain how the ARC works.",
    "I'll walk you through the steps.",
    "Is it done?",
    "Does it work now?",
    "If it still fails, check the cable.",
    "It should work now.",
    "I set a fixed IP on the router.",
    "Thanks, that helps a lot.",
    "What is the difference between raidz1 and raidz2?",
    "Not fixed.",
    "I'll have a coffee, please.",
    "I'll miss you.",
    "I still can't believe it.",
    "I can't get anything done with this noise.",
    "I'm sure we'll have fine weather.",
    "Okay, my turn.",
]


@pytest.mark.parametrize("sentence", DECISIONS)
def test_a_decision_cue_fires(sentence: str) -> None:
    assert "decision" in cues_of(sentence)


@pytest.mark.parametrize("sentence", OPEN_ITEMS)
def test_an_open_item_cue_fires(sentence: str) -> None:
    assert "open" in cues_of(sentence)


@pytest.mark.parametrize("sentence", DONE)
def test_a_done_cue_fires(sentence: str) -> None:
    assert cues_of(sentence) == {"done"}


@pytest.mark.parametrize("sentence", NOT_CUES)
def test_a_sentence_without_a_cue_fires_nothing(sentence: str) -> None:
    assert cues_of(sentence) == frozenset()


@pytest.mark.parametrize(
    "sentence",
    [
        "I'll check the logs and get back to you.",
        "Nanti saya cek dulu ya.",
        "Let's use ZFS send for this.",
        "Kita pakai aja snapshot harian.",
        "I'll explain the difference first.",
        "Keputusan yang baik, apalagi musim hujan.",
        "Pakai `zpool replace` aja.",
        "Jadi kita pakai perintah rsync di sini.",
        "Bagian penjualan menyusul setelah datanya masuk.",
    ],
)
def test_the_assistants_promises_and_proposals_are_not_items(sentence: str) -> None:
    assert cues_of(sentence, role="assistant") == frozenset()


@pytest.mark.parametrize(
    ("sentence", "kinds"),
    [
        ("Tadi masih error, sekarang sudah bisa.", {"done"}),
        ("Kabelnya sudah diganti tapi masih error.", {"done", "open"}),
        ("Udah beres, nanti aku cek lagi besok.", {"done", "open"}),
        ("Jadi kita pakai restic, nanti aku pasang malam ini.", {"decision", "open"}),
        ("The scrub still fails, I'll swap the cable tomorrow.", {"open"}),
        ("Kalau udah beres, nanti aku kabari.", {"open"}),
        ("Belum beres nih.", {"open"}),
        ("Nggak berhasil.", {"open"}),
        ("It's not fixed yet.", {"open"}),
        ("The cache `TODO` column stays; see https://example.org/todo for more.", set()),
    ],
)
def test_cues_in_one_sentence_combine_as_they_read(sentence: str, kinds: set[str]) -> None:
    assert cues_of(sentence) == kinds


def test_the_issues_own_cue_phrases_fire() -> None:
    rows = {
        "sudah diputuskan": ("Sudah diputuskan pakai dua disk.", "decision"),
        "jadi kita pakai": ("Jadi kita pakai Nextcloud.", "decision"),
        "nanti saya": ("Nanti saya kirim fotonya.", "open"),
        "belum": ("Belum, nanti aku coba.", "open"),
        "TODO": ("TODO pasang cron buat scrub", "open"),
        "we'll": ("We'll check the logs after the reboot.", "open"),
        "let's": ("Let's go with two mirrors.", "decision"),
        "still failing": ("The nightly job is still failing.", "open"),
    }
    assert {cue: kind in cues_of(s) for cue, (s, kind) in rows.items()} == dict.fromkeys(rows, True)


@pytest.mark.parametrize(
    ("sentence", "speaker", "lang", "expected"),
    [
        ("I'll check the snapshots", "Dimas", "en", "Dimas will check the snapshots"),
        ("I'm rebuilding my NAS", "Dimas", "en", "Dimas is rebuilding Dimas's NAS"),
        ("I've ordered two disks.", "Dimas", "en", "Dimas has ordered two disks."),
        ("I was away, so I missed it.", "Sekar", "en", "Sekar was away, so Sekar missed it."),
        ("I have a spare SSD.", "Sekar", "en", "Sekar has a spare SSD."),
        ("I'd rather wait.", "Sekar", "en", "Sekar would rather wait."),
        ("I am not sure yet.", "Sekar", "en", "Sekar is not sure yet."),
        ("I think I need a bigger UPS.", "Dimas", "en", "Dimas thinks Dimas needs a bigger UPS."),
        ("I don't know why.", "Dimas", "en", "Dimas doesn't know why."),
        ("I also want to try Jellyfin.", "Dimas", "en", "Dimas also wants to try Jellyfin."),
        ("Remind me to renew it.", "Dimas", "en", "Remind Dimas to renew it."),
        ("We'll use restic on our NAS.", "Dimas", "en", "Dimas and the assistant will use restic on Dimas's NAS."),
        ("nanti saya cek", "Dimas", "id", "nanti Dimas cek"),
        ("Aku udah ganti kabelnya.", "Sekar", "id", "Sekar udah ganti kabelnya."),
        ("Gue cek dulu ya, gw lupa.", "Raka", "id", "Raka cek dulu ya, Raka lupa."),
        ("Laptopku mati lagi.", "Sekar", "id", "Laptop Sekar mati lagi."),
        ("NAS-ku penuh.", "Dimas", "id", "NAS Dimas penuh."),
        ("Kita pakai restic aja.", "Dimas", "id", "Dimas dan asisten pakai restic aja."),
        ("Buku yang aku beli kemarin.", "Sekar", "id", "Buku yang Sekar beli kemarin."),
        ("I ran `rm -rf ~/my/cache` on /home/me/data", "Dimas", "en", "Dimas ran `rm -rf ~/my/cache` on /home/me/data"),
        ("See https://example.org/i/my for my notes", "Dimas", "en", "See https://example.org/i/my for Dimas's notes"),
        ("I'll explain the steps.", "the assistant", "en", "The assistant will explain the steps."),
        ("Saya sarankan pakai rsync.", "asisten", "id", "Asisten sarankan pakai rsync."),
        ("I/O errors on my disk.", "Dimas", "en", "I/O errors on Dimas's disk."),
        ("The US store ships to us.", "Dimas", "en", "The US store ships to Dimas and the assistant."),
        ("Set GW ke 192.168.1.1, gw udah coba.", "Dimas", "id", "Set GW ke 192.168.1.1, Dimas udah coba."),
        ("Ibuku dirawat, saya jaga.", "Sekar", "id", "Ibu Sekar dirawat, Sekar jaga."),
    ],
)
def test_first_person_pronouns_become_the_speaker(sentence: str, speaker: str, lang: str, expected: str) -> None:
    assert as_third_person(sentence, speaker, lang) == expected


def test_the_assistants_we_stays_as_written() -> None:
    assert as_third_person("We can use ZFS here.", "the assistant", "en", role="assistant") == "We can use ZFS here."


def test_a_sentence_without_first_person_pronouns_is_unchanged() -> None:
    sentence = "Scrub selesai tanpa error; the pool is ONLINE."
    assert as_third_person(sentence, "Dimas", "id") == sentence


@pytest.mark.parametrize(
    ("item", "sentence"),
    [
        ("Dimas will check the ZFS snapshots", "The ZFS snapshots are fixed now."),
        ("Backup ke NAS masih gagal", "Backup ke NAS sudah berhasil."),
        ("Kabel SATA di server belum diganti", "I replaced the SATA cable on the server, works now."),
        ("Dimas will pay the electricity bill", "Tagihan listrik sudah dibayar."),
        ("The office printer is still failing", "Printer kantor sudah bisa lagi."),
        ("Sekar belum tahu mau pakai backup apa", "Jadi kita pakai restic untuk backup."),
    ],
)
def test_a_later_sentence_that_reports_it_done_closes_an_item(item: str, sentence: str) -> None:
    assert closes(item, sentence)


@pytest.mark.parametrize(
    ("item", "sentence"),
    [
        # unrelated, though done
        ("Dimas will check the ZFS snapshots", "The Docker compose stack works now."),
        ("Printer di kantor masih error", "Wifi rumah sudah normal lagi."),
        # related, but nothing done
        ("Dimas will check the ZFS snapshots", "I looked at the ZFS snapshots again."),
        ("Printer di kantor masih error", "Printer kantor masih error."),
        ("Backup ke NAS masih gagal", "Backup ke NAS sudah jalan tapi masih gagal verifikasi."),
        ("Backup ke NAS masih gagal", "Apakah backup ke NAS sudah berhasil?"),
        # a decision settles a question, not a failure
        ("Backup ke NAS masih gagal", "Jadi kita pakai NAS lain untuk backup."),
        # one shared word of many
        ("Dimas will replace the fan in the Proxmox host", "The Proxmox upgrade is done."),
    ],
)
def test_a_sentence_that_does_not_close_an_item_leaves_it_open(item: str, sentence: str) -> None:
    assert not closes(item, sentence)


def test_within_a_conversation_a_quarter_of_the_items_words_closes_it() -> None:
    item = "Semenjak pasang adguard home, aplikasi bank aku gak bisa login."
    answer = "Udah allow api bank, bisa login sekarang."
    assert not closes(item, answer)
    assert closes(item, answer, share=1 / 4)


def test_content_terms_are_stemmed_and_skip_stop_and_generic_words() -> None:
    assert content_terms("I'll check the snapshots tomorrow") == {"snapshot"}
    assert content_terms("Nanti aku cek kabelnya") == {"kabel"}
    assert content_terms("") == frozenset()


def test_every_cue_table_compiles_with_its_placeholders() -> None:
    fragments = [*table.DECISION, *table.PROPOSAL, *table.DONE, *table.NOT_CUES]
    fragments += [f for sort in table.OPEN.values() for f in sort]
    assert all(re.compile(table.fill(f)) for f in fragments)


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=300), st.text(max_size=30), st.sampled_from(["en", "id"]), st.sampled_from(["user", "assistant"])
)
def test_no_function_raises_on_any_text(text: str, speaker: str, lang: str, role: str) -> None:
    assert cues_of(text, role=role) <= set(KINDS)
    assert isinstance(as_third_person(text, speaker, lang, role=role), str)
    assert isinstance(closes(text, speaker + text), bool)
    assert isinstance(content_terms(text), frozenset)


_PRONOUNS = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "aku", "saya", "gue"}
_PRONOUNS |= {"gua", "gw", "ane", "kita", "ku"}


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_text_without_a_first_person_pronoun_is_left_as_written(text: str) -> None:
    words = set(re.findall(r"[^\W_]+", text.lower()))
    if words & _PRONOUNS or any(w.endswith("ku") for w in words):
        return
    assert as_third_person(text, "Dimas", "en") == text
