"""A deterministic bilingual evaluation archive for semantic recall, with its questions.

``corpus()`` builds about 90 days of chat transcripts (kenang markdown, one session per
file) for ``gading``, an Indonesian homelab person who talks with his assistant in
Indonesian, English and a mix of both, plus about ten days for his sister ``rina``
whose topics overlap his. ``questions()`` returns the recall questions, all asked by
``gading``, each with the local day(s) whose transcript answers it.

The data (exchange pools, scenes, long English days, the sister's scenes and the
questions) lives in ``recall_corpus.yaml`` beside this file; this module holds the slot
generators and the assembly. How it is made:

- Topic *scenes* are hand-written conversations that carry the facts the questions
  ask about (names, numbers, hostnames, error codes, decisions). Each scene is placed
  on a day index and names the question keys it answers; a question's answer dates are
  derived from the scenes that name its key, so no date is written down twice.
- *Filler* sessions come from per-topic exchange pools with ``<<slot>>`` slots (hosts,
  VM ids, sizes, prices, people; the demo's template syntax, ``flows.cli.demo_corpus.fill``)
  and ``[[a|b]]`` alternatives, so distractor days share the topics and vocabulary of the
  answer days but not their facts.
- *Long English* days are LoCoMo-style personal chats (a cat named Miso, a sister's
  wedding in Bandung, marathon training, a fintech job interview): planted beats carry
  the facts, generic life beats fill the sessions.
- *Related-only* questions: a later day A names an earlier day B by ISO date; the query
  matches A's wording, the answer is only B, which says the same thing in other words.

Invariants:

- Deterministic, the stdlib, PyYAML and the demo's template helpers only: the data file
  is read once, on first use, and nothing else; no work at import time; every random
  choice comes from ``random.Random`` seeded with a fixed string (the day index and a
  purpose), so the text depends on ``start`` only through the dates it names.
- Kinds ``cross_lingual`` and ``long_en`` are derived from the answer scenes (language
  of the answer differs from the query's; the answer is a long English day), the others
  are declared with the question.
- Sessions lie between 06:00 and 23:30 local time; messages are 20 s to 5 min apart;
  ``session_id`` is ``YYYY-MM-DD-HHMM`` and unique per user; no body line starts with
  ``## ``.

Run ``python -m benchmarks.recall_corpus`` (or this file) for statistics and checks.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

import yaml

from flows.cli.demo_corpus import MONTHS_EN, fill, indonesian_date

__all__ = ["DAYS", "KINDS", "USERS", "CorpusFile", "Question", "corpus", "questions"]

USERS = ("gading", "rina")
DAYS = 90
KINDS = ("plain", "cross_lingual", "related_only", "keyword", "long_en")
_SEED = "kenang-recall-corpus-v1"


@dataclass(frozen=True)
class CorpusFile:
    relpath: str  # "gading/2026-03-04-0912.md": user folder / file name
    text: str  # the transcript in kenang's markdown format
    day: dt.date  # the local day the session is on


@dataclass(frozen=True)
class Question:
    qid: str  # "q01".. in declaration order
    user: str  # who asks: always the archive's owner, "gading"
    lang: str  # "id" or "en": the language of the query
    kinds: tuple[str, ...]  # subset of KINDS
    query: str
    answers: tuple[dt.date, ...]  # the day(s) whose transcript answers it, ascending


# --- small helpers -----------------------------------------------------------------


def _fmt_en(d: dt.date) -> str:
    return f"{MONTHS_EN[d.month - 1]} {d.day}, {d.year}"


def _idr(n: int) -> str:
    """Rupiah the way Indonesians write it: 1.320.000."""
    return f"{n:,}".replace(",", ".")


def _rng(*parts: object) -> random.Random:
    """A generator seeded by a fixed string: the same parts always give the same stream."""
    return random.Random(":".join([_SEED, *map(str, parts)]))


_CHOICE = re.compile(r"\[\[([^\[\]]*)\]\]")
_DAYSLOT = re.compile(r"^d(\d+)_(id|en|iso)$")


def _render(template: str, slots: dict[str, object], rng: random.Random, start: dt.date) -> str:
    """Expand ``[[a|b]]`` alternatives, then ``<<slot>>`` values; ``<<d12_id>>`` names day 12."""
    text = _CHOICE.sub(lambda m: rng.choice(m[1].split("|")), template)

    def slot(name: str) -> object:
        if name in slots:
            return slots[name]
        dm = _DAYSLOT.match(name)
        if dm is None:
            raise KeyError(f"unknown slot <<{name}>> in template: {template[:60]!r}")
        d = start + dt.timedelta(days=int(dm[1]))
        return {"id": indonesian_date, "en": _fmt_en, "iso": dt.date.isoformat}[dm[2]](d)

    return fill(text, slot)


def _script(text: str) -> list[tuple[str, str]]:
    """``U> ...`` / ``A> ...`` lines open a user / assistant message; other lines continue it."""
    out: list[tuple[str, list[str]]] = []
    for line in text.strip("\n").split("\n"):
        if line.startswith(("U> ", "A> ")) or line in ("U>", "A>"):
            out.append(("user" if line[0] == "U" else "assistant", [line[3:]]))
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"script text before the first U>/A> line: {line!r}")
    return [(role, "\n".join(body).strip("\n")) for role, body in out]


@dataclass
class _Session:
    """One planned session, before times are assigned."""

    user: str
    day: int  # day index from start
    lang: str  # "id" | "en" | "mix"
    agent: str
    window: str  # "m" morning, "a" afternoon, "e" evening
    messages: list[tuple[str, str]]  # (role, text), rendered
    source: str  # "scene" | "filler" | "long_en"
    keys: tuple[str, ...] = ()  # question keys this session answers
    name: str = ""
    topic: str = ""
    greet: str = ""  # filler: language of the greeting the first message gets once the window is final
    at: str = ""  # fixed start "HH:MM", else a random minute in the window


@dataclass(frozen=True)
class _Scene:
    """A hand-written session that carries question facts."""

    day: int
    lang: str
    text: str  # U>/A> script with [[a|b]] and <<slots>>
    keys: tuple[str, ...] = ()
    name: str = ""  # a handle for ``ref``
    ref: str = ""  # name of an earlier scene whose date this one cites: <<ref>>, <<ref_id>>, <<ref_en>>
    window: str = "e"
    agent: str = "hermes"
    topic: str = ""
    user: str = "gading"
    slots: tuple[tuple[str, str], ...] = ()
    at: str = ""  # "HH:MM": a fixed start, for a scene whose text depends on the hour


@dataclass(frozen=True)
class _Q:
    """A question before its answers are derived from the scenes naming ``key``."""

    key: str
    lang: str
    query: str
    kinds: tuple[str, ...] = ("plain",)
    token: str = ""  # keyword questions: the exact token that must appear on the answer day only


# --- filler: per-topic exchange pools --------------------------------------------------
#
# A filler session is a few (user, assistant) exchanges drawn from one topic's pool in
# one language, with the slots sampled once per session. Slot values come from ranges
# that avoid every keyword token the questions use (VLAN 47, port 51834, pve-02.lan,
# nas-gudang, PAY-3817, ...): ``_check`` verifies that.


def _pair(rng: random.Random, options: list[tuple[str, ...]], names: tuple[str, ...]) -> dict[str, str]:
    return dict(zip(names, rng.choice(options), strict=False))


def _slots_proxmox(rng: random.Random) -> dict[str, object]:
    host, host2 = rng.sample(["pve-01.lan", "pve-03.lan", "pve-mini.lan"], 2)
    vmid = rng.choice([v for v in range(101, 140) if v not in (105, 110)])
    s: dict[str, object] = {
        "host": host,
        "host2": host2,
        "node2": host2.removesuffix(".lan"),
        "vmid": vmid,
        "vmname": rng.choice(
            [
                "immich",
                "nextcloud",
                "gitea",
                "jellyfin",
                "paperless",
                "grafana",
                "k3s-node1",
                "win11-kerja",
                "ubuntu-dev",
                "frigate",
                "minecraft",
            ]
        ),
        "lxcname": rng.choice(
            [
                "uptime-kuma",
                "mosquitto",
                "nginx-proxy",
                "syncthing",
                "homepage",
                "vikunja",
                "linkding",
                "audiobookshelf",
            ]
        ),
        "store": rng.choice(["pbs-local", "nas-nfs", "backup-usb", "local-zfs"]),
        "hh": rng.randint(1, 4),
        "kernel": rng.choice(["6.8.12-4-pve", "6.8.12-8-pve", "6.11.11-1-pve", "6.8.12-9-pve"]),
        "pool": rng.choice(["rpool", "tank", "fastpool"]),
        "ram_gb": rng.choice([4, 6, 8, 12, 16]),
        "disk_gb": rng.choice([32, 48, 64, 80, 120, 200]),
        "temp": rng.randint(78, 94),
        "free_pct": rng.randint(6, 14),
        "arc_gb": rng.choice([4, 6, 8, 12]),
        "render_gid": rng.choice([104, 105, 993]),
        "snaps": rng.randint(40, 180),
    }
    s["ram_min"] = max(1, int(s["ram_gb"]) // 2)
    s["arc_bytes"] = int(s["arc_gb"]) * 1024**3
    s["mig_min"] = max(2, int(s["disk_gb"]) * 9 // 1000 + rng.randint(1, 3))
    s.update(
        _pair(
            rng,
            [
                (
                    f"ERROR: Backup of VM {vmid} failed - vma_queue_write: write error - Broken pipe",
                    "koneksi ke storage tujuan putus di tengah jalan",
                    "the connection to the target storage dropped halfway",
                    "Cek `dmesg -T | grep -i nfs` di host, biasanya ada 'server not responding' di jam yang sama.",
                    "Check `dmesg -T | grep -i nfs` on the host; there is usually a 'server not responding' at the same minute.",
                ),
                (
                    f"ERROR: Backup of VM {vmid} failed - no space left on device",
                    "storage tujuan penuh sebelum arsipnya selesai ditulis",
                    "the target filled up before the archive was finished",
                    "Hapus backup lama atau atur ulang jumlah yang disimpan di job itu, lalu cek `df -h` di mount-nya.",
                    "Delete old archives or lower how many the job keeps, then check `df -h` on the mount.",
                ),
                (
                    f"ERROR: Backup of VM {vmid} failed - can't acquire lock '/var/run/vzdump.lock' - got timeout",
                    "job sebelumnya belum selesai, jadi lock masih dipegang",
                    "the previous job was still running and held the lock",
                    "Lihat `ps aux | grep vzdump`; kalau ada job nyangkut, hentikan dari Tasks di web UI, jangan `kill -9`.",
                    "Look at `ps aux | grep vzdump`; stop a stuck job from Tasks in the web UI rather than `kill -9`.",
                ),
                (
                    f"ERROR: Backup of VM {vmid} failed - VM {vmid} qmp command 'guest-fsfreeze-freeze' failed - got timeout",
                    "QEMU guest agent di dalam VM tidak merespons waktu filesystem mau dibekukan",
                    "the QEMU guest agent inside the VM did not answer the filesystem freeze",
                    "Restart agent di dalam VM: `systemctl restart qemu-guest-agent`, lalu cek `qm agent "
                    + str(vmid)
                    + " ping`.",
                    "Restart the agent inside the VM with `systemctl restart qemu-guest-agent`, then `qm agent "
                    + str(vmid)
                    + " ping`.",
                ),
            ],
            ("vzerr", "vzcause", "vzcause_en", "vzfix", "vzfix_en"),
        )
    )
    s.update(
        _pair(
            rng,
            [
                (
                    f"repaired 0B in 02:{rng.randint(10, 59):02d}:11 with 0 errors",
                    "Nol error dan nol perbaikan, itu hasil ideal.",
                    "Zero errors and nothing repaired: ideal.",
                ),
                (
                    f"repaired 0B in 05:{rng.randint(10, 59):02d}:40 with 0 errors",
                    "Bersih, cuma lama karena isinya sudah besar.",
                    "Clean; it only took long because the pool is full of data.",
                ),
                (
                    f"repaired {rng.choice([64, 128, 256])}K in 04:{rng.randint(10, 59):02d}:02 with 0 errors",
                    "Ada sedikit blok yang diperbaiki dari salinan mirror. Sekali masih wajar, tapi catat disk mana di kolom CKSUM.",
                    "A few blocks were repaired from the mirror copy. Once is fine, but note which disk shows CKSUM counts.",
                ),
            ],
            ("scrub", "scrub_note", "scrub_note_en"),
        )
    )
    return s


def _slots_nas(rng: random.Random) -> dict[str, object]:
    s: dict[str, object] = {
        "nas": rng.choice(["nas-utama", "syno-ds220"]),
        "share": rng.choice(["Foto", "Dokumen", "Media", "Arsip-Kantor", "Musik", "Scan"]),
        "dataset": rng.choice(["tank/foto", "tank/dokumen", "tank/media", "tank/arsip"]),
        "mbps": rng.randint(9, 38),
        "gb": rng.randint(40, 900),
        "disk": rng.choice(["WD Red Plus 4TB", "Seagate IronWolf 8TB", "Toshiba N300 6TB", "WD Red Plus 6TB"]),
        "dtemp": rng.randint(38, 49),
        "crc": rng.choice([0, 0, 2, 14]),
        "uid": rng.choice([1000, 1001, 568, 3000]),
        "nas_ip": f"192.168.10.{rng.choice([5, 6, 20])}",
        "keep": rng.choice([7, 14, 30]),
        "hour": rng.randint(1, 5),
        "app": rng.choice(["Immich", "Jellyfin", "Nextcloud", "Syncthing", "Photoprism"]),
        "appver": f"v1.{rng.randint(110, 135)}.{rng.randint(0, 3)}",
    }
    s["files"] = rng.randint(1200, 48000)
    s["pool"] = rng.choice(["tank", "tank2", "backup"])
    s.update(
        _pair(
            rng,
            [
                (
                    "see: ZFS-8000-9P",
                    "ONLINE tapi satu disk punya error",
                    "ZFS-8000-9P artinya satu perangkat mengalami error yang sudah dikoreksi dari salinan lain, data aman. Cek SMART disk itu dan kabelnya.",
                ),
                (
                    "see: ZFS-8000-4J",
                    "DEGRADED",
                    "ZFS-8000-4J artinya satu perangkat nggak dikenali lagi oleh pool, biasanya disk lepas atau label berubah. Cek `lsblk` dan kabel SATA-nya dulu.",
                ),
                (
                    "see: ZFS-8000-2Q",
                    "DEGRADED",
                    "ZFS-8000-2Q artinya satu perangkat hilang dan nggak bisa dibuka. Pool masih jalan dari sisi mirror lain, tapi jangan tunda pemeriksaan.",
                ),
            ],
            ("zfsmsg", "zfsstate", "zfsnote"),
        )
    )
    return s


def _slots_docker(rng: random.Random) -> dict[str, object]:
    return {
        "ctr": rng.choice(
            [
                "immich-server",
                "nextcloud",
                "paperless-ngx",
                "uptime-kuma",
                "vaultwarden",
                "homepage",
                "jellyfin",
                "mealie",
                "actual-budget",
            ]
        ),
        "port": rng.choice([8080, 8081, 3000, 3001, 8096, 9000, 5055]),
        "ha_ver": f"2026.{rng.randint(3, 5)}.{rng.randint(0, 4)}",
        "integ": rng.choice(["Tuya", "Xiaomi Miot", "Tapo", "SmartThings", "Broadlink"]),
        "sensor": rng.choice(["sensor.suhu_kamar", "sensor.suhu_ruang_tengah", "sensor.suhu_kamar_ibu"]),
        "ac_temp": rng.randint(24, 27),
        "thr": rng.randint(28, 31),
        "gb": rng.randint(18, 96),
        "loggb": rng.randint(3, 17),
        "days": rng.choice([3, 7, 14]),
        "mon": rng.randint(9, 31),
        "host": rng.choice(["docker-01", "pve-01.lan", "pve-03.lan"]),
        "mins": rng.choice([2, 5, 10]),
    }


def _slots_network(rng: random.Random) -> dict[str, object]:
    vlan = rng.choice([10, 20, 30, 40])
    return {
        "vlan": vlan,
        "vlan2": rng.choice([v for v in (10, 20, 30, 40) if v != vlan]),
        "dev": rng.choice(
            ["printer Epson", "TV Xiaomi", "robot vacuum", "ESP32 sensor", "CCTV teras", "laptop kantor"]
        ),
        "ip_last": rng.randint(30, 199),
        "pf_ver": rng.choice(["2.7.2", "24.11", "25.03"]),
        "domain": rng.choice(
            [
                "s.shopee.co.id",
                "app-measurement.com",
                "graph.instagram.com",
                "click.tokopedia.com",
                "t.co",
                "ads.tiktok.com",
            ]
        ),
        "peer": rng.choice(["hp-gading", "laptop-kerja", "tablet-ibu", "hp-rina"]),
        "wg_ip": f"10.8.0.{rng.randint(2, 20)}",
        "down": rng.randint(18, 95),
        "plan": rng.choice([50, 100, 150]),
        "isp": rng.choice(["IndiHome", "Biznet", "MyRepublic", "First Media"]),
        "blocked": rng.randint(12, 31),
        "ap": rng.choice(["Omada EAP225", "Omada EAP615", "UniFi U6 Lite"]),
    }


def _slots_work(rng: random.Random) -> dict[str, object]:
    nums = [n for n in range(2100, 4990) if n not in (3817,)]
    return {
        "ticket": f"LOG-{rng.choice(nums)}",
        "ticket2": f"PAY-{rng.choice(nums)}",
        "ms": rng.choice([850, 1200, 1900, 2700, 4100]),
        "rows": rng.choice([3, 7, 12, 18]),
        "vendor": rng.choice(["JNE", "SiCepat", "Anteraja", "Lion Parcel", "Ninja Xpress"]),
        "hexb": rng.choice(["92", "a0", "e9", "96"]),
        "files": rng.randint(28, 64),
        "prop": rng.choice(["courierId", "etaMinutes", "podUrl", "weightGram"]),
        "mig": f"2026{rng.randint(3, 5):02d}{rng.randint(1, 28):02d}_add_{rng.choice(['eta_column', 'pod_table', 'zone_index', 'courier_rating'])}",
        "reval": rng.choice([30, 60, 300]),
        "team": rng.choice(["mobile", "finance", "warehouse", "data"]),
        "clients": rng.choice([100, 120, 200]),
        "dup": rng.randint(3, 40),
    }


def _slots_ramadan(rng: random.Random, day: int) -> dict[str, object]:
    zakat = rng.choice([45000, 47000, 50000])
    return {
        "zakat3": _idr(3 * zakat),
        "rday": day + 12,
        "stok": rng.choice(
            [
                "telur, tempe, bayam",
                "ayam fillet, wortel, kentang",
                "ikan kembung, tahu, kangkung",
                "sosis, nasi sisa, jagung manis",
                "daging giling, kol, telur puyuh",
            ]
        ),
        "imsak": f"04.{rng.randint(24, 30)}",
        "subuh": f"04.{rng.randint(34, 40)}",
        "magrib": f"18.0{rng.randint(0, 5)}",
        "masjid": rng.choice(["Al-Ikhlas", "Baitul Makmur", "Nurul Huda", "At-Taqwa"]),
        "tarawih_end": f"21.{rng.randint(5, 40):02d}",
        "zakat": _idr(zakat),
        "nastar": rng.randint(2, 5),
        "nastar_price": _idr(rng.choice([95000, 110000, 125000])),
        "takjil": _idr(rng.choice([185000, 240000, 310000])),
        "koko": _idr(rng.choice([250000, 350000, 400000])),
        "resto": rng.choice(["Bakmi GM Margo City", "Warung Tekko Depok", "Ayam Penyet Ria", "Solaria Detos"]),
        "people": rng.randint(5, 11),
        "pp": _idr(rng.choice([75000, 90000, 120000])),
    }


def _slots_family(rng: random.Random) -> dict[str, object]:
    return {
        "sys": rng.randint(128, 152),
        "dia": rng.randint(80, 96),
        "arisan": rng.randint(12, 22),
        "nephew": rng.choice(["Raka", "Nadia", "Bima", "Zahra"]),
        "age": rng.randint(4, 10),
        "om": rng.choice(["Hadi", "Bambang", "Joko"]),
        "years": rng.choice([25, 30, 35]),
        "tukang": _idr(rng.choice([350000, 450000, 600000])),
    }


def _slots_run(rng: random.Random) -> dict[str, object]:
    km = rng.choice([5, 6, 7, 8, 10, 12, 14, 16])
    return {
        "km": km,
        "pace": f"{rng.choice([6, 7])}:{rng.choice([5, 12, 18, 25, 33, 41, 58]):02d}",
        "hr": rng.randint(138, 162),
        "shoe": rng.choice(["Ortuseight Hyperblast", "Hoka Clifton 9", "Asics Novablast 4", "Saucony Kinvara 14"]),
        "shoe_km": rng.randint(380, 720),
        "sleep": rng.choice(["4,5", "5", "5,5"]),
        "hrv": rng.randint(28, 44),
        "reps": rng.choice([6, 8, 10]),
        "place": rng.choice(["GOR Kukusan", "kampus UI", "Situ Gintung", "taman Margonda"]),
    }


def _slots_budget(rng: random.Random) -> dict[str, object]:
    watt = rng.choice([65, 80, 95, 110])
    return {
        "food": _idr(rng.choice([420000, 510000, 635000, 780000])),
        "trans": _idr(rng.choice([85000, 140000, 215000])),
        "coffee": _idr(rng.choice([96000, 150000, 210000])),
        "icloud": rng.choice([50, 200]),
        "listrik": _idr(rng.choice([612000, 688000, 745000, 820000])),
        "watt": watt,
        "kwh": round(watt * 24 * 30 / 1000),
        "rp_kwh": _idr(round(watt * 24 * 30 / 1000 * 1444.7)),
        "disk": rng.choice(["WD Red Plus 4TB", "Seagate IronWolf 8TB", "Toshiba N300 6TB"]),
        "hdd": _idr(rng.choice([1650000, 2450000, 3350000])),
        "rdpu": _idr(rng.choice([500000, 750000, 1000000])),
    }


def _slots_reading(rng: random.Random) -> dict[str, object]:
    book, part_id, part_en = rng.choice(_data().books)
    return {
        "book": book,
        "part_id": part_id,
        "part_en": part_en,
        "page": rng.randint(60, 420),
        "target": rng.choice([18, 20, 24]),
        "done": rng.randint(3, 9),
        "theme": rng.choice(["sejarah Nusantara", "kebiasaan kerja", "sistem terdistribusi", "keuangan pribadi"]),
        "theme_en": rng.choice(["Indonesian history", "work habits", "distributed systems", "personal finance"]),
        "mins": rng.choice([20, 30, 45]),
    }


# --- long English days: LoCoMo-style personal chat --------------------------------------
#
# A long day has two sessions in English. Planted beats carry the facts the ``long_en``
# questions ask about; generic beats (below) fill the sessions with everyday life. A
# generic beat never states a planted fact (shelter, vet visit, venue, offer, ...), so
# each fact lives on exactly one day; beats about the cat only appear once she exists,
# beats about the job search only before the decision, the handover only after it.

_RECRUIT_DAY, _CAT_DAY, _JOB_DAY = 22, 24, 49
_LONG_EXTRA = 2  # generic beats added to each count in ``_LONG_DAYS``


def _slots_life(rng: random.Random) -> dict[str, object]:
    return {
        "station": rng.choice(["Sudirman", "Manggarai", "Tanah Abang", "Juanda", "Tebet", "Cikini"]),
        "crowd": rng.choice(
            [
                "so packed I couldn't reach my phone",
                "strangely empty because of a school holiday",
                "delayed 25 minutes by a signal problem at Manggarai",
                "standing room only but at least moving",
            ]
        ),
        "t1": rng.choice(["15:10", "16:40", "13:30", "17:05"]),
        "t2": rng.choice(["19:00", "20:15", "18:30", "21:10"]),
        "spot": rng.choice(["the Gramedia", "the Pondok Cina underpass", "Detos", "the flyover near UI"]),
        "dish": rng.choice(
            [
                "sayur lodeh",
                "rendang from Ibu's recipe",
                "nasi goreng kampung",
                "soto ayam",
                "tempe mendoan",
                "pasta aglio olio",
                "ayam bakar taliwang",
                "sop buntut",
            ]
        ),
        "dish_result": rng.choice(
            [
                "it came out too salty",
                "Ibu said it beat hers, which is a kind lie",
                "I burned the first batch",
                "Kak Rina went back for seconds",
            ]
        ),
        "cafe": rng.choice(["Tuku", "a tiny place called Titik Temu", "Fore", "a warung kopi by the station"]),
        "drink": rng.choice(["es kopi susu", "V60 of Gayo beans", "kopi pandan", "iced long black"]),
        "price": rng.choice(["18k", "24k", "32k", "38k"]),
        "city": rng.choice(["Semarang", "Solo", "Cirebon", "Malang"]),
        "news": rng.choice(
            [
                "my cousin is having twins",
                "the family house needs a new roof",
                "an aunt won a cooking contest",
                "someone's goat escaped during the wedding",
            ]
        ),
        "rina": rng.choice(
            [
                "learning sourdough, so the kitchen smells like vinegar",
                "training for a 5K with her office friends",
                "repainting her room a pastel green",
                "reorganising the whole pantry by expiry date",
            ]
        ),
        "show": rng.choice(
            [
                "a Korean drama",
                "old Warkop DKI clips",
                "a documentary about the Trans-Siberian railway",
                "Formula 1 highlights",
                "a cooking competition",
            ]
        ),
        "sleep_t": rng.choice(["1 a.m.", "half past midnight", "almost 2"]),
        "podcast": rng.choice(["Hidden Brain", "Syntax", "Makna Talks", "99% Invisible"]),
        "pod_topic": rng.choice(
            [
                "why we procrastinate",
                "CSS container queries",
                "grief and routine",
                "the design of train station signs",
                "the history of the spreadsheet",
            ]
        ),
        "weekend": rng.choice(
            [
                "repotting Ibu's plants",
                "at Gramedia without buying anything",
                "washing the motorbike and fixing its horn",
                "helping a neighbour move a fridge",
                "cleaning out the storage room",
            ]
        ),
        "friend": rng.choice(["Bayu from college", "Sekar", "Dimas", "Putri from my first job"]),
        "friend_news": rng.choice(
            [
                "moved to Surabaya for work",
                "got engaged",
                "started a coffee roastery in Bogor",
                "is doing a master's in Delft",
                "quit his job to drive for his own catering",
            ]
        ),
        "cable": rng.choice(
            [
                "found a patch cable I'd been hunting for since January",
                "labelled every cable with the label maker",
                "moved the switch lower so its fan gets more air",
            ]
        ),
        "antic": rng.choice(
            [
                "sat on my keyboard during standup and unmuted me",
                "figured out how to open the bathroom door",
                "sleeps in the laundry basket every afternoon now",
                "chased a gecko for half an hour and lost",
                "brought me a bottle cap at 4 a.m. like a trophy",
                "watched the washing machine for an entire cycle",
            ]
        ),
        "feel": rng.choice(
            ["heavy legs", "surprisingly light", "sleepy for the first 3 km", "great once the rain stopped"]
        ),
        "ekm": rng.choice([6, 7, 8, 9, 10, 12]),
        "guests": rng.randint(110, 190),
        "debate": rng.choice(
            [
                "batik or kebaya for the women",
                "how many buses to rent from Depok to Bandung",
                "whether to invite Ibu's whole arisan group",
                "the colour of the invitation card",
            ]
        ),
        "job_thought": rng.choice(
            [
                "the commute to SCBD would be longer",
                "I'd miss the team here",
                "the work sounds closer to what I actually enjoy",
            ]
        ),
        "handover": rng.choice(
            [
                "wrote the runbook for the invoice jobs",
                "paired with Fajar on the deploy scripts",
                "moved my cron jobs to a shared account",
                "recorded a walkthrough of the admin app",
            ]
        ),
        "book": rng.choice(["Bumi Manusia", "The Phoenix Project", "Project Hail Mary", "Cantik Itu Luka", "Sapiens"]),
        "pages": rng.choice([30, 45, 60, 80]),
        "song": rng.choice(["Sheila on 7's Dan", "Dewa 19's Kangen", "a Tulus song", "Blackbird"]),
        "bill": rng.choice(["the motorbike tax", "BPJS for Ibu", "the internet bill", "the car rental deposit"]),
        "neighbor": rng.choice(["Pak Slamet", "Pak Herman", "Bu Ani"]),
        "neighbor_thing": rng.choice(
            [
                "started raising chickens",
                "is building a second floor",
                "gave us a whole bag of rambutan",
                "lent me his ladder for the gutter",
            ]
        ),
        "item": rng.choice(
            ["a new desk lamp", "a label maker", "a used Kindle", "a drying rack", "a cheap USB microphone"]
        ),
        "iprice": rng.choice(["Rp180.000", "Rp265.000", "Rp420.000", "Rp650.000"]),
        "movie": rng.choice(["Agak Laen", "a Studio Ghibli rerun", "an old Rano Karno film", "Dune Part Two"]),
        "bh": rng.randint(79, 88),
        "work_detail": rng.choice(
            [
                "three meetings that could have been messages",
                "a quiet day of fixing flaky tests",
                "a production alert at 9 a.m. that turned out to be a full disk",
                "a long code review with Fajar",
            ]
        ),
        "photo": rng.choice(
            ["the rain on the window", "the old market in Pasar Kemiri", "Ibu's orchids", "the KRL at dusk"]
        ),
        "cousin": rng.choice(["Lina", "Tika", "Ayu"]),
        "laptop": rng.choice(
            [
                "the Wi-Fi driver vanished after an update",
                "it was full of browser toolbars",
                "the disk was 99% full of WhatsApp videos",
                "the charger was simply unplugged",
            ]
        ),
        "times": rng.choice([3, 4, 5]),
        "market": rng.choice(["Pasar Kemiri", "the UI campus car-free morning", "Pasar Santa"]),
        "market_item": rng.choice(
            ["a kilo of rambutan", "a used cast-iron pan", "three kinds of sambal", "a plant Ibu didn't ask for"]
        ),
        "barber": rng.choice(["the barbershop near the station", "Pak Udin's place", "a new place in Margo City"]),
        "haircut": rng.choice(
            ["Shorter than I asked.", "Best one in months.", "He talked about football the whole time."]
        ),
        "office_event": rng.choice(
            ["a potluck lunch", "a fire drill", "a surprise birthday for Mbak Tari", "a town hall about the new office"]
        ),
        "emails": rng.choice([312, 840, 1260, 2045]),
        "moto_fix": rng.choice(["new brake pads", "a chain and sprocket set", "a new battery", "new tyres"]),
        "moto_price": rng.choice(["Rp185.000", "Rp420.000", "Rp310.000", "Rp650.000"]),
        "argue": rng.choice(
            [
                "whose turn it was to take out the trash",
                "the thermostat on the AC",
                "whether Miso is allowed on the sofa",
                "the best martabak in Depok",
            ]
        ),
        "dewi_stress": rng.choice(
            [
                "the seating plan",
                "Arief's mother's opinions about the menu",
                "the photographer cancelling",
                "the invitation printer's delay",
            ]
        ),
        "groc": rng.choice(["Rp287.000", "Rp412.000", "Rp356.500"]),
        "journal": rng.choice(["three lines a night", "one page in the morning", "only things I'm grateful for"]),
        "back": rng.choice(
            ["Maybe a standing desk?", "The office chair is from 2015.", "Kak Rina says it's my posture."]
        ),
        "route": rng.choice(
            [
                "the lake at UI",
                "the Ciliwung riverside path",
                "the quiet streets behind Kelapa Dua",
                "the Grand Depok City loop",
                "the old railway path near Citayam",
            ]
        ),
        "toy": rng.choice(["a crumpled receipt", "a hair tie", "the cap of a water bottle", "a feather from the yard"]),
        "cat_item": rng.choice(["a scratching post", "a cat tunnel", "a heated bed", "a feather wand"]),
        "cat_price": rng.choice(["Rp95.000", "Rp140.000", "Rp210.000"]),
    }


@dataclass(frozen=True)
class _Beat:
    """A planted part of a long English session; ``key`` is the question key it answers."""

    text: str
    key: str = ""


# --- the data file ---------------------------------------------------------------------

#: What the archive says and what is asked of it: filler pools, books, scenes, generic and
#: planted beats of the long English days, the sister's scenes and the questions.
DATA_FILE = Path(__file__).with_name("recall_corpus.yaml")


@dataclass(frozen=True)
class _Data:
    pools: dict[str, dict[str, tuple[tuple[str, str], ...]]]  # topic -> language -> (user, assistant) exchanges
    books: list[tuple[str, str, str]]  # (title, the part talked about in Indonesian, in English)
    scenes: tuple[_Scene, ...]
    life_beats: tuple[tuple[str, str, str], ...]  # (when it may be used, user, assistant)
    long_days: dict[int, tuple[tuple[str, tuple[_Beat | int, ...]], ...]]  # day -> (window, items) per session
    rina_scenes: tuple[_Scene, ...]
    questions: tuple[_Q, ...]  # order matters: qids and the tune/test split follow it, so only append


@lru_cache(maxsize=1)
def _data() -> _Data:
    """``recall_corpus.yaml``, read once, as the tuples and dataclasses the builders walk."""
    raw = yaml.load(DATA_FILE.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

    def scene(d: dict) -> _Scene:
        return _Scene(**{**d, "keys": tuple(d.get("keys", ())), "slots": tuple(map(tuple, d.get("slots", ())))})

    def session(s: dict) -> tuple[str, tuple[_Beat | int, ...]]:
        return s["window"], tuple(x if isinstance(x, int) else _Beat(**x) for x in s["items"])

    return _Data(
        pools={t: {lang: tuple(map(tuple, ex)) for lang, ex in by.items()} for t, by in raw["pools"].items()},
        books=[tuple(b) for b in raw["books"]],
        scenes=tuple(map(scene, raw["scenes"])),
        life_beats=tuple(map(tuple, raw["life_beats"])),
        long_days={day: tuple(map(session, sessions)) for day, sessions in raw["long_days"].items()},
        rina_scenes=tuple(map(scene, raw["rina_scenes"])),
        questions=tuple(_Q(**{**q, "kinds": tuple(q.get("kinds", ("plain",)))}) for q in raw["questions"]),
    )


# --- assembly --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Topic:
    slots: object  # (rng) -> dict, or (rng, day) -> dict when ``by_day``
    pools: dict[str, tuple[tuple[str, str], ...]]
    windows: str
    agents: tuple[str, ...]
    by_day: bool = False


@lru_cache(maxsize=1)
def _topics() -> dict[str, _Topic]:
    pools = _data().pools
    return {
        "proxmox": _Topic(_slots_proxmox, pools["proxmox"], "mae", ("hermes", "zed")),
        "nas": _Topic(_slots_nas, pools["nas"], "mae", ("hermes", "zed")),
        "docker": _Topic(_slots_docker, pools["docker"], "ae", ("hermes", "zed")),
        "network": _Topic(_slots_network, pools["network"], "mae", ("hermes",)),
        "work": _Topic(_slots_work, pools["work"], "ma", ("zed",)),
        "ramadan": _Topic(_slots_ramadan, pools["ramadan"], "me", ("hermes",), by_day=True),
        "family": _Topic(_slots_family, pools["family"], "ae", ("hermes",)),
        "run": _Topic(_slots_run, pools["run"], "me", ("hermes",)),
        "budget": _Topic(_slots_budget, pools["budget"], "e", ("hermes",)),
        "reading": _Topic(_slots_reading, pools["reading"], "e", ("hermes",)),
    }


_RAMADAN_LAST = 17  # the last day of fasting; day 18 is Idul Fitri
_NO_WORK_DAYS = frozenset({16, 17, 18, 19})  # cuti bersama around Idul Fitri
_RINA_DAYS = (1, 3, 9, 13, 26, 40, 51, 62, 74, 87)

_GREET = {
    ("id", "m"): ("Pagi.", "Pagi!", "Pagi, mau tanya.", ""),
    ("id", "a"): ("Siang.", "Halo, siang.", ""),
    ("id", "e"): ("Malam.", "Malam!", "Halo,", ""),
    ("en", "m"): ("Morning.", "Good morning!", ""),
    ("en", "a"): ("Hi.", "Quick question.", ""),
    ("en", "e"): ("Evening.", "Hey.", ""),
}
_CLOSE_TALK = {
    "id": (
        "[[Oke|Sip|Siap]], [[masuk akal|noted|nanti aku pikirin lagi]]. [[Makasih ya|Makasih]]!",
        "[[Sama-sama.|Siap.]] [[Cerita lagi kapan-kapan ya.|Semoga lancar.|Kabari kalau ada yang berubah.]]",
    ),
    "en": (
        "[[Okay|Great|Makes sense]], [[thanks|noted|that helps]].",
        "[[You're welcome.|Anytime.|Happy to help.]] [[Tell me how it goes.|Talk soon.|Good luck with it.]]",
    ),
}
_TECH = frozenset({"proxmox", "nas", "docker", "network", "work"})
_CLOSE = {
    "id": (
        "[[Oke|Sip|Siap|Mantap]], [[aku coba dulu|nanti aku kabari|udah jalan|beres]]. [[Makasih ya|Thanks|Makasih]]!",
        "[[Sama-sama.|Siap.|Oke.]] [[Kalau masih error, kirim log-nya.|Kabari hasilnya ya.|Semoga lancar.|Nanti cek lagi besok pagi.]]",
    ),
    "en": (
        "[[Great|Perfect|Okay]], [[that worked|I'll try that|done]]. [[Thanks!|Thank you.|Cheers.]]",
        "[[You're welcome.|Anytime.|Glad it helped.]] [[Send me the log if it acts up again.|Let me know how it goes.|Check it again tomorrow.]]",
    ),
}


# Conversational glue around pool exchanges, so the same advice is not the same message.
_USER_TURN = {
    "id": (
        "Satu lagi.",
        "Oh iya, satu lagi.",
        "Ganti topik sebentar.",
        "Lanjut ya.",
        "Sekalian nanya.",
        "Nah, ini yang dari tadi mau aku tanyain.",
        "Masih soal homelab.",
    ),
    "en": (
        "One more thing.",
        "Another one.",
        "Switching topics.",
        "Also:",
        "Related question.",
        "While I have you:",
        "Something else from this week.",
    ),
}
_USER_TAIL = {
    "id": ("Gimana menurutmu?", "Ada saran?", "Bingung nih.", "Aku belum nemu jawabannya di forum."),
    "en": ("Thoughts?", "Any ideas?", "I couldn't find a clear answer online."),
}
_LEAD = {
    ("id", True): ("Oke.", "Baik.", "Paham.", "Hmm.", "Bisa.", "Oke, kita urai pelan-pelan.", "Siap."),
    ("en", True): ("Sure.", "Okay.", "Got it.", "Right.", "Good question.", "Let's see."),
    ("id", False): ("Oke.", "Paham.", "Hmm.", "Baik."),
    ("en", False): ("I see.", "Okay.", "Right.", "Got it."),
}
_FOLLOW = {
    ("id", True): (
        "Kabari hasilnya ya.",
        "Kalau masih sama, kirim output-nya ke sini.",
        "Mau aku bantu cek langkah berikutnya?",
        "Catat juga di catatan homelab biar nggak lupa.",
        "Kalau ragu, snapshot atau backup dulu sebelum ubah apa-apa.",
        "Paling aman dicoba di jam sepi.",
        "Ada pesan error lain di log?",
    ),
    ("en", True): (
        "Let me know what you see.",
        "If it still misbehaves, paste the output here.",
        "Want me to walk through the next step?",
        "Worth a line in your homelab notes.",
        "Take a snapshot or backup first if you're unsure.",
        "Try it outside busy hours.",
    ),
    ("id", False): (
        "Kabari perkembangannya ya.",
        "Nanti cerita lagi hasilnya.",
        "Semoga membantu.",
        "Mau aku catat buat minggu depan?",
    ),
    ("en", False): ("Tell me how it goes.", "Keep me posted.", "Hope that helps.", "Want me to note it for next week?"),
}


def _glue_user(text: str, lang: str, first: bool, rng: random.Random) -> str:
    if not first and rng.random() < 0.4:
        text = f"{rng.choice(_USER_TURN[lang])} {text}"
    if rng.random() < 0.25 and not text.rstrip().endswith(("?", "`")):
        text = f"{text} {rng.choice(_USER_TAIL[lang])}"
    return text


def _glue_assistant(text: str, lang: str, tech: bool, rng: random.Random) -> str:
    if rng.random() < 0.4:
        text = f"{rng.choice(_LEAD[(lang, tech)])} {text}"
    if rng.random() < 0.4:
        text = (
            f"{text}\n\n{rng.choice(_FOLLOW[(lang, tech)])}"
            if text.rstrip().endswith("`")
            else f"{text} {rng.choice(_FOLLOW[(lang, tech)])}"
        )
    return text


def _filler(user: str, day: int, n: int, topic_name: str, start: dt.date, usage: Counter) -> _Session:
    """One filler session: a few exchanges from one topic's pool, slots sampled once.

    The least used exchanges of the pool are preferred (``usage`` counts them across the
    whole corpus), so the same advice seldom comes back.
    """
    rng = _rng("filler", user, day, n)
    topic = _topics()[topic_name]
    tech = topic_name in _TECH
    slots = topic.slots(rng, day) if topic.by_day else topic.slots(rng)
    p_en = 0.75 if user == "rina" else 0.35
    roll = rng.random()
    lang = "en" if roll < p_en else ("mix" if roll < p_en + 0.15 else "id")
    langs = ("id", "en") if lang == "mix" else (lang,)
    pool = [(topic_name, lng, i) for lng in langs for i in range(len(topic.pools[lng]))]
    k = rng.randint(min(4, len(pool)), min(7, len(pool)))
    ranked = sorted(pool, key=lambda x: (usage[x], rng.random()))
    picked = ranked[:k]
    rng.shuffle(picked)
    usage.update(picked)
    window = rng.choice(topic.windows)
    messages: list[tuple[str, str]] = []
    for i, (_, lng, idx) in enumerate(picked):
        u, a = topic.pools[lng][idx]
        u_text = _glue_user(_render(u, slots, rng, start), lng, i == 0, rng)
        a_text = _glue_assistant(_render(a, slots, rng, start), lng, tech, rng)
        messages += [("user", u_text), ("assistant", a_text)]
    if rng.random() < 0.35:
        lng = picked[-1][1]
        u, a = (_CLOSE if topic_name in _TECH else _CLOSE_TALK)[lng]
        messages += [("user", _render(u, slots, rng, start)), ("assistant", _render(a, slots, rng, start))]
    return _Session(
        user=user,
        day=day,
        lang=lang,
        agent=rng.choice(topic.agents),
        window=window,
        messages=messages,
        source="filler",
        topic=topic_name,
        greet=picked[0][1],
    )


def _scene_session(sc: _Scene, names: dict[str, int], start: dt.date) -> _Session:
    rng = _rng("scene", sc.user, sc.day, sc.name or sc.ref or sc.topic)
    slots: dict[str, object] = dict(sc.slots)
    if sc.ref:
        ref_day = start + dt.timedelta(days=names[sc.ref])
        slots.update(ref=ref_day.isoformat(), ref_id=indonesian_date(ref_day), ref_en=_fmt_en(ref_day))
    messages = [(role, _render(text, slots, rng, start)) for role, text in _script(sc.text)]
    return _Session(
        user=sc.user,
        day=sc.day,
        lang=sc.lang,
        agent=sc.agent,
        window=sc.window,
        messages=messages,
        source="scene",
        keys=sc.keys,
        name=sc.name,
        topic=sc.topic,
        at=sc.at,
    )


def _life_beat(day: int, n: int, used: set[int], usage: Counter) -> tuple[str, str]:
    """A generic beat allowed on ``day``, not yet used that day, preferring the least used overall."""
    rng = _rng("beat", day, n)

    def allowed(i: int, req: str) -> bool:
        if req.endswith("!") and usage[i]:
            return False
        return {
            "any": True,
            "cat": day > _CAT_DAY,
            "job_pre": _RECRUIT_DAY < day < _JOB_DAY,
            "job_post": day > _JOB_DAY,
            "run": not 39 <= day < 50,
        }[req.rstrip("!")]

    choices = [i for i, (req, _, _) in enumerate(_data().life_beats) if allowed(i, req) and i not in used]
    i = min(choices, key=lambda c: (usage[c], rng.random()))
    used.add(i)
    usage[i] += 1
    _, u, a = _data().life_beats[i]
    slots = _slots_life(rng)
    a_text = _render(a, slots, rng, dt.date.min)
    if rng.random() < 0.35:
        a_text = f"{rng.choice(_LEAD[('en', False)])} {a_text}"
    return _render(u, slots, rng, dt.date.min), a_text


def _long_sessions(day: int, start: dt.date, usage: Counter) -> list[_Session]:
    out: list[_Session] = []
    used: set[int] = set()
    counter = 0
    for s_idx, (window, items) in enumerate(_data().long_days[day]):
        messages: list[tuple[str, str]] = []
        keys: list[str] = []
        for item in items:
            if isinstance(item, int):
                for _ in range(item + _LONG_EXTRA):
                    counter += 1
                    messages += list(zip(("user", "assistant"), _life_beat(day, counter, used, usage), strict=False))
            else:
                rng = _rng("planted", day, s_idx, item.key)
                messages += [(role, _render(t, {}, rng, start)) for role, t in _script(item.text)]
                if item.key:
                    keys.append(item.key)
        out.append(
            _Session(
                user="gading",
                day=day,
                lang="en",
                agent="hermes",
                window=window,
                messages=messages,
                source="long_en",
                keys=tuple(keys),
                topic="life",
            )
        )
    return out


def _filler_topics(day: int, start: dt.date, exclude: set[str], user: str, recent: Counter) -> list[str]:
    weekday = (start + dt.timedelta(days=day)).weekday()
    w = {"proxmox": 3.5, "nas": 3.5, "docker": 2.5, "network": 3.0, "run": 2.0, "budget": 1.5, "reading": 1.0}
    if day <= _RAMADAN_LAST and user == "gading":
        w["ramadan"] = 5.0
    if day > _RAMADAN_LAST:
        w["family"] = 1.5
    if weekday < 5 and day not in _NO_WORK_DAYS and user == "gading":
        w["work"] = 4.5
    names = [t for t in w if t not in exclude]
    weights = [w[t] / (1 + 2 * recent[t]) for t in names]  # what came up lately is less likely again
    return names and [_rng("topics", user, day, len(exclude)).choices(names, weights)[0]] or []


_WINDOWS = {"m": (6 * 60, 8 * 60 + 30), "a": (11 * 60 + 15, 14 * 60 + 30), "e": (18 * 60 + 30, 21 * 60)}


def _assign_windows(sessions: list[_Session]) -> None:
    """Give each session of one user-day its own window, keeping preferences where possible."""
    taken: set[str] = set()
    order = {"m": "mae", "a": "aem", "e": "eam"}
    for s in sorted(sessions, key=lambda s: s.source != "scene" and s.source != "long_en"):
        w = next(w for w in order[s.window] if w not in taken)
        s.window = w
        taken.add(w)


@lru_cache(maxsize=4)
def _plan(start: dt.date) -> tuple[_Session, ...]:
    names = {sc.name: sc.day for sc in _data().scenes if sc.name}
    by_day: dict[tuple[str, int], list[_Session]] = defaultdict(list)
    for sc in _data().scenes + _data().rina_scenes:
        by_day[(sc.user, sc.day)].append(_scene_session(sc, names, start))
    beat_usage: Counter[int] = Counter()
    for day in sorted(_data().long_days):
        by_day[("gading", day)] += _long_sessions(day, start, beat_usage)
    usage: Counter[tuple[str, str, int]] = Counter()
    for user, days in (("gading", range(DAYS)), ("rina", _RINA_DAYS)):
        for day in days:
            have = by_day[(user, day)]
            if len(have) > 3:
                raise ValueError(f"{user} day {day}: {len(have)} planned sessions, at most 3")
            want = _rng("count", user, day).choices((1, 2, 3), (0.2, 0.45, 0.35))[0]
            if user == "rina":
                want = min(want, 2)
            n = 0
            while len(have) < max(want, 1) and n < 3:
                used = {s.topic for s in have}
                recent = Counter(s.topic for d in range(day - 6, day) for s in by_day.get((user, d), ()))
                topics = _filler_topics(day, start, used, user, recent)
                if not topics:
                    break
                have.append(_filler(user, day, n, topics[0], start, usage))
                n += 1
    out: list[_Session] = []
    for (user, day), sessions in sorted(by_day.items()):
        _assign_windows(sessions)
        for s in sessions:
            if s.greet:
                greet = _rng("greet", user, day, s.window).choice(_GREET[(s.greet, s.window)])
                if greet:
                    s.messages[0] = ("user", f"{greet} {s.messages[0][1]}")
        out += sorted(sessions, key=lambda s: "mae".index(s.window))
    return tuple(out)


def _timestamps(s: _Session, start: dt.date) -> list[dt.datetime]:
    """Local naive times: a start in the session's window, then 20 s to 5 min between messages."""
    rng = _rng("times", s.user, s.day, s.window)
    lo, hi = _WINDOWS[s.window]
    minute = rng.randint(lo, hi)
    if s.at:
        hh, mm = map(int, s.at.split(":"))
        minute = hh * 60 + mm
        if not lo <= minute <= hi:
            raise ValueError(f"{s.user} day {s.day}: fixed start {s.at} outside window {s.window!r}")
    t = dt.datetime.combine(start + dt.timedelta(days=s.day), dt.time()) + dt.timedelta(minutes=minute)
    out = [t]
    for (role, text), _ in zip(s.messages[:-1], s.messages[1:], strict=False):
        if role == "user":  # the assistant answers: quick, a bit longer for a long answer
            gap = 20 + rng.randint(0, 40) + min(60, len(text) // 40)
        else:  # the user reads, does the thing, comes back
            gap = rng.randint(40, 240) + min(60, len(text) // 30)
        t = t + dt.timedelta(seconds=min(300, max(20, gap)))
        out.append(t)
    return out


def _session_text(s: _Session, times: list[dt.datetime], sid: str, offset: str) -> str:
    head = f"---\nsession_id: {sid}\nuser_id: {s.user}\nagent: {s.agent}\n---\n"
    parts = [head]
    for (role, text), t in zip(s.messages, times, strict=False):
        parts.append(f"\n## {role} · {t.strftime('%Y-%m-%dT%H:%M:%S')}{offset}\n{text}\n")
    return "".join(parts)


@lru_cache(maxsize=8)
def _files(start: dt.date, tz_offset: str) -> tuple[tuple[CorpusFile, _Session], ...]:
    if not re.fullmatch(r"[+-]\d{2}:\d{2}", tz_offset):
        raise ValueError(f"tz_offset must look like +07:00, got {tz_offset!r}")
    out: list[tuple[CorpusFile, _Session]] = []
    for s in _plan(start):
        times = _timestamps(s, start)
        sid = times[0].strftime("%Y-%m-%d-%H%M")
        f = CorpusFile(
            relpath=f"{s.user}/{sid}.md",
            text=_session_text(s, times, sid, tz_offset),
            day=start + dt.timedelta(days=s.day),
        )
        out.append((f, s))
    return tuple(out)


def corpus(*, start: dt.date = dt.date(2026, 3, 2), tz_offset: str = "+07:00") -> list[CorpusFile]:
    """Every transcript, gading's and rina's, ordered by user, day and time."""
    return [f for f, _ in _files(start, tz_offset)]


def _answer_sessions(start: dt.date) -> dict[str, list[_Session]]:
    out: dict[str, list[_Session]] = defaultdict(list)
    for s in _plan(start):
        if s.user == "gading":
            for key in s.keys:
                out[key].append(s)
    return out


def questions(*, start: dt.date = dt.date(2026, 3, 2)) -> list[Question]:
    """The recall questions, all gading's, with answers derived from the scenes that carry them."""
    by_key = _answer_sessions(start)
    out: list[Question] = []
    for i, q in enumerate(_data().questions, start=1):
        sessions = by_key.get(q.key, [])
        if not sessions:
            raise ValueError(f"question {q.key!r} has no answer session")
        kinds = list(q.kinds)
        if all(s.lang != q.lang for s in sessions):
            kinds.append("cross_lingual")
        if all(s.source == "long_en" for s in sessions):
            kinds.append("long_en")
        if "plain" in kinds and len(kinds) > 1:
            kinds.remove("plain")
        answers = tuple(sorted({start + dt.timedelta(days=s.day) for s in sessions}))
        out.append(
            Question(
                qid=f"q{i:02d}",
                user="gading",
                lang=q.lang,
                kinds=tuple(k for k in KINDS if k in kinds),
                query=q.query,
                answers=answers,
            )
        )
    return out


# --- statistics and checks (python -m benchmarks.recall_corpus) -------------------------

_HEADER = re.compile(r"^## (user|assistant) · (\S+)$")
_WORD = re.compile(r"\w+")
_ISO = re.compile(r"(?<![\w.,:/-])(\d{4})-(\d{2})-(\d{2})(?!\d)")
# What kenang's redactor would take for a credential assignment ("pass: ...", "token = ...").
_SECRETISH = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:password|passwd|passphrase|pass|pwd|kata sandi|sandi|secret|token|api[_-]?key)"
    r"(?:-?nya)?[\"']?[ \t]*(?::(?!=)|=(?![=>]))"
)


def _parse(text: str) -> tuple[dict[str, str], list[tuple[str, dt.datetime, str]]]:
    """A strict reader for what this module writes: frontmatter, then '## role · ts' turns."""
    head, _, body = text.partition("\n---\n")
    meta = dict(line.split(": ", 1) for line in head.removeprefix("---\n").splitlines())
    turns: list[tuple[str, dt.datetime, list[str]]] = []
    for line in body.split("\n"):
        m = _HEADER.match(line)
        if m:
            turns.append((m[1], dt.datetime.fromisoformat(m[2]), []))
        elif line.startswith("## "):
            raise AssertionError(f"body line starts with '## ': {line[:60]!r}")
        elif turns:
            turns[-1][2].append(line)
    return meta, [(r, t, "\n".join(b).strip("\n")) for r, t, b in turns]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4}


def _token_re(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(token) + r"(?![A-Za-z0-9])", re.IGNORECASE)


def _check(start: dt.date = dt.date(2026, 3, 2)) -> list[str]:
    """Every invariant the module promises; returns the problems found (empty when all hold)."""
    problems: list[str] = []

    def need(ok: bool, what: str) -> None:
        if not ok:
            problems.append(what)

    pairs = _files(start, "+07:00")
    files = [f for f, _ in pairs]
    qs = questions(start=start)
    need(files == corpus(start=start) and qs == questions(start=start), "not deterministic")

    day_text: dict[tuple[str, dt.date], str] = defaultdict(str)
    sids: Counter[str] = Counter()
    for f, s in pairs:
        try:
            meta, turns = _parse(f.text)
        except (AssertionError, ValueError) as exc:
            problems.append(f"{f.relpath}: unreadable ({exc})")
            continue
        user = f.relpath.split("/")[0]
        need(meta.get("user_id") == user == s.user, f"{f.relpath}: user_id {meta.get('user_id')!r}")
        need(f.relpath == f"{user}/{meta['session_id']}.md", f"{f.relpath}: name differs from session_id")
        sids[f.relpath] += 1
        need(6 <= len(turns) <= 30, f"{f.relpath}: {len(turns)} messages")
        need([(r, b) for r, _, b in turns] == s.messages, f"{f.relpath}: does not read back as generated")
        times = [t for _, t, _ in turns]
        need(all(t.utcoffset() == dt.timedelta(hours=7) for t in times), f"{f.relpath}: offset")
        need(all(t.date() == f.day for t in times), f"{f.relpath}: crosses its day")
        need(dt.time(6) <= times[0].time() and times[-1].time() <= dt.time(23, 30), f"{f.relpath}: outside 06:00-23:30")
        gaps = [(b - a).total_seconds() for a, b in pairwise(times)]
        need(all(20 <= g <= 300 for g in gaps), f"{f.relpath}: gap outside 20 s..5 min")
        need(all(r in ("user", "assistant") for r, _, _ in turns), f"{f.relpath}: role")
        for _, _, b in turns:
            need(b.strip() != "", f"{f.relpath}: empty message")
            need("[[" not in b and "]]" not in b, f"{f.relpath}: unexpanded [[...]]")
            need(_SECRETISH.search(b) is None, f"{f.relpath}: reads like a credential assignment")
        day_text[(user, f.day)] += "\n".join(b for _, _, b in turns) + "\n"
    need(max(sids.values()) == 1, "duplicate session ids")

    days = [start + dt.timedelta(days=i) for i in range(DAYS)]
    per_day = Counter(f.day for f in files if f.relpath.startswith("gading/"))
    need(all(1 <= per_day[d] <= 3 for d in days), "gading: a day without 1-3 sessions")
    need(set(per_day) == set(days), "gading: sessions outside the 90 days")
    n_msgs = sum(len(s.messages) for _, s in pairs)
    need(2000 <= n_msgs <= 3500, f"{n_msgs} messages in all")
    need(len(_data().long_days) >= 15, "fewer than 15 long English days")

    kinds = Counter(k for q in qs for k in q.kinds)
    need(len(qs) >= 48, f"only {len(qs)} questions")
    langs = Counter(q.lang for q in qs)
    need(langs["id"] == langs["en"], f"languages unbalanced: {dict(langs)}")
    for kind, least in (("cross_lingual", 10), ("related_only", 6), ("keyword", 6), ("long_en", 8)):
        need(kinds[kind] >= least, f"{kind}: {kinds[kind]} < {least}")
    need(all(1 <= len(q.answers) <= 2 for q in qs), "a question with no or more than two answers")
    need(sum(len(q.answers) == 1 for q in qs) > 0.9 * len(qs), "too many multi-answer questions")

    gading = {d: t for (u, d), t in day_text.items() if u == "gading"}
    for q, spec in zip(qs, _data().questions, strict=False):
        need(all(a in gading for a in q.answers), f"{q.qid}: an answer day has no gading file")
        if "related_only" in q.kinds:
            (b,) = q.answers
            refs = [d for d, t in gading.items() if d != b and b.isoformat() in {m[0] for m in _ISO.finditer(t)}]
            need(bool(refs), f"{q.qid}: {b} is not cited by ISO date on another day")
            need(all(d > b for d in refs) and not set(refs) & set(q.answers), f"{q.qid}: the citing day is an answer")
            qw = _words(q.query)
            for a in refs:
                need(
                    len(qw & _words(gading[a])) > len(qw & _words(gading[b])),
                    f"{q.qid}: query shares more words with the answer {b} than with the citing day {a}",
                )
        if spec.token:
            pat = _token_re(spec.token)
            hits = {(u, d) for (u, d), t in day_text.items() if pat.search(t)}
            need(hits == {("gading", a) for a in q.answers}, f"{q.qid}: token {spec.token!r} on {sorted(hits)}")
            need(pat.search(q.query) is not None, f"{q.qid}: the query lacks its token")
    return problems


def _lexical(start: dt.date = dt.date(2026, 3, 2)) -> tuple[int, int, Counter[str], Counter[str]]:
    """How often the day with the largest share of the query's words (4+ letters) is an answer."""
    texts: dict[dt.date, str] = defaultdict(str)
    for f, s in _files(start, "+07:00"):
        if s.user == "gading":
            texts[f.day] += "\n".join(t for _, t in s.messages) + "\n"
    bags = {d: Counter(w for w in _WORD.findall(t.lower()) if len(w) >= 4) for d, t in texts.items()}
    right = total = 0
    by_kind_right: Counter[str] = Counter()
    by_kind_total: Counter[str] = Counter()
    for q in questions(start=start):
        if "keyword" in q.kinds:
            continue
        qw = _words(q.query)

        def score(d: dt.date, qw: set[str] = qw) -> tuple[float, int]:
            bag = bags[d]
            return (sum(1 for w in qw if w in bag) / len(qw), sum(bag[w] for w in qw))

        best = max(sorted(bags), key=score)
        ok = best in q.answers
        total += 1
        right += ok
        for k in q.kinds:
            by_kind_total[k] += 1
            by_kind_right[k] += ok
    return right, total, by_kind_right, by_kind_total


def _main() -> int:
    start = dt.date(2026, 3, 2)
    pairs = _files(start, "+07:00")
    qs = questions(start=start)
    print(f"files: {len(pairs)}")
    for user in USERS:
        mine = [(f, s) for f, s in pairs if s.user == user]
        days = {f.day for f, _ in mine}
        n = sum(len(s.messages) for _, s in mine)
        print(f"  {user}: {len(mine)} sessions on {len(days)} days ({min(days)}..{max(days)}), {n} messages")
    print(f"  all: {sum(len(s.messages) for _, s in pairs)} messages")
    src = Counter(s.source for f, s in pairs if s.user == "gading")
    print(f"  gading sessions by source: {dict(src)}; long English days: {len(_data().long_days)}")
    lens = sorted(len(s.messages) for _, s in pairs)
    print(f"  messages per session: min {lens[0]}, median {lens[len(lens) // 2]}, max {lens[-1]}")
    iso_days = {f.day for f, s in pairs if s.user == "gading" and _ISO.search("\n".join(t for _, t in s.messages))}
    print(f"  gading days citing an ISO date: {len(iso_days)}")
    print(f"questions: {len(qs)}")
    print(f"  by lang: {dict(sorted(Counter(q.lang for q in qs).items()))}")
    print(f"  by kind: {dict(sorted(Counter(k for q in qs for k in q.kinds).items()))}")
    print(f"  with two answers: {sum(len(q.answers) == 2 for q in qs)}")
    right, total, kr, kt = _lexical(start)
    print(
        f"lexical overlap baseline (top day by share of 4+ letter query words), non-keyword questions: "
        f"{right}/{total} = {right / total:.0%}"
    )
    for k in sorted(kt):
        print(f"  {k}: {kr[k]}/{kt[k]}")
    problems = _check(start)
    other = _check(dt.date(2025, 11, 3)) if not problems else []
    for p in problems + [f"(start 2025-11-03) {p}" for p in other]:
        print(f"FAIL {p}")
    if problems or other:
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
