"""A deterministic bilingual evaluation archive for semantic recall, with its questions.

``corpus()`` builds about 90 days of chat transcripts (kenang markdown, one session per
file) for ``gading``, an Indonesian homelab person who talks with his assistant in
Indonesian, English and a mix of both, plus about ten days for his sister ``rina``
whose topics overlap his. ``questions()`` returns the recall questions, all asked by
``gading``, each with the local day(s) whose transcript answers it.

How it is made:

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

- Pure and deterministic, the stdlib and the demo's template helpers only: no I/O and
  no work at import time; every random choice comes from ``random.Random`` seeded with
  a fixed string (the day index and a purpose), so the text depends on ``start`` only
  through the dates it names.
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


_PROXMOX_ID = (
    (
        "Backup vzdump jam 0<<hh>>.00 buat VM <<vmid>> (<<vmname>>) gagal lagi. Di log:\n```\n<<vzerr>>\n```",
        "Dari pesannya, <<vzcause>>. [[Coba urut begini:|Langkahnya:]]\n1. <<vzfix>>\n2. Jalankan ulang manual: `vzdump <<vmid>> --storage <<store>> --mode snapshot`.\n3. Kalau sukses, biarkan jadwal malam ini jalan dan cek lagi besok pagi.",
    ),
    (
        "Scrub pool `<<pool>>` di <<host>> udah selesai: `<<scrub>>`. [[Aman nggak sih?|Ini aman kan?]]",
        "[[Aman.|Masih aman.]] <<scrub_note>> Jadwal scrub bawaan ada di `/etc/cron.d/zfsutils-linux` (Minggu kedua tiap bulan). Kalau mau hasilnya dikirim otomatis, nyalakan notifikasi email di ZED.",
    ),
    (
        "Habis `apt full-upgrade`, kernel naik ke <<kernel>>. Harus reboot sekarang atau bisa nunggu akhir pekan?",
        "Bisa nunggu, yang jalan tetap kernel lama sampai reboot. Sebelum reboot:\n- pastikan backup terakhir VM penting sukses;\n- `proxmox-boot-tool kernel list` buat cek kernel baru sudah terdaftar;\n- kalau ada passthrough, cek `dmesg | grep -i vfio` setelah boot.\nJangan ditunda lebih dari seminggu kalau changelog-nya ada perbaikan keamanan.",
    ),
    (
        "VM <<vmid>> (<<vmname>>) sering kena OOM padahal aku kasih <<ram_gb>> GB. Ballooning nyala, minimum <<ram_min>> GB.",
        "Dengan ballooning, host boleh narik RAM VM sampai <<ram_min>> GB kalau host sesak. Cek dulu ARC ZFS di <<host>>: `arc_summary | head -30`.\nDua opsi:\n1. Matikan ballooning untuk VM ini (Hardware > Memory > Ballooning Device).\n2. Batasi ARC, di `/etc/modprobe.d/zfs.conf`:\n```\noptions zfs zfs_arc_max=<<arc_bytes>>\n```\nItu <<arc_gb>> GiB. Lalu `update-initramfs -u -k all` dan reboot.",
    ),
    (
        "Mau bikin LXC baru buat <<lxcname>>. [[Enaknya|Mending]] pakai template Debian 12 atau Ubuntu 24.04?",
        "Buat <<lxcname>> aku pilih Debian 12: lebih kecil, update-nya kalem. Unprivileged saja, 1 core dan 512 MB cukup. Kalau butuh akses file dari NAS, mount di host lalu bind-mount ke container (`mp0`), jangan mount NFS dari dalam LXC unprivileged.",
    ),
    (
        "local-zfs di <<host>> tinggal <<free_pct>>% [[kosong|free]]. Yang paling makan tempat apa ya?",
        "Lihat per dataset:\n```\nzfs list -o name,used,refer,usedbysnapshots -s used | tail -15\n```\nKalau kolom usedbysnapshots besar, biang keroknya snapshot lama. Kamu punya sekitar <<snaps>> snapshot? Hapus yang lebih dari sebulan, dan usahakan pool jangan lewat 80% karena ZFS melambat kalau hampir penuh.",
    ),
    (
        "Aku mau pindahin VM <<vmid>> dari <<host>> ke <<host2>>, tanpa shared storage. Bisa online?",
        "Bisa, migrasi dengan local disk:\n```\nqm migrate <<vmid>> <<node2>> --online --with-local-disks\n```\nDisknya <<disk_gb>> GB, lewat link 1 GbE kira-kira <<mig_min>> menit. Pastikan nama storage di <<host2>> sama, kalau beda tambahkan `--targetstorage`.",
    ),
    (
        "Suhu CPU <<host>> sampai <<temp>>°C waktu <<vmname>> lagi sibuk. [[Normal nggak?|Bahaya nggak?]]",
        "<<temp>>°C di mini PC masih di bawah batas throttling, tapi kipasnya pasti kerja keras. Coba cek `sensors` waktu idle sebagai pembanding. Kalau idle sudah di atas 55°C, bersihkan debu dan ganti pasta termal; kalau cuma waktu beban, batasi core VM itu atau set `cpulimit`.",
    ),
    (
        "LXC <<lxcname>> di <<host>> nggak dapat IP setelah reboot. Config-nya pakai DHCP.",
        "Coba dari host: `pct enter` lalu `ip a`. Kalau interface down, biasanya masalah bridge: pastikan `vmbr0` yang dipakai. Kalau naik tapi tanpa IP, cek lease di pfSense, mungkin MAC container berubah karena di-restore dari backup.",
    ),
)

_PROXMOX_EN = (
    (
        "Last night's vzdump for VM <<vmid>> (<<vmname>>) failed again:\n```\n<<vzerr>>\n```",
        "That message means <<vzcause_en>>. <<vzfix_en>> Then rerun it by hand with `vzdump <<vmid>> --storage <<store>> --mode snapshot` and see whether tonight's scheduled run passes.",
    ),
    (
        "The monthly scrub on `<<pool>>` finished on <<host>>: `<<scrub>>`. Anything to worry about?",
        "<<scrub_note_en>> If you want these results by mail, enable ZED notifications; the scrub itself is scheduled by `/etc/cron.d/zfsutils-linux`.",
    ),
    (
        "New kernel <<kernel>> landed after the upgrade. Reboot tonight or wait for the weekend?",
        "The old kernel keeps running until you reboot, so waiting is fine. Before rebooting, confirm the last backups succeeded and run `proxmox-boot-tool kernel list`. If anything breaks you can pin the previous kernel with `proxmox-boot-tool kernel pin`.",
    ),
    (
        "<<host>> local storage is down to <<free_pct>>% free. How do I find what's eating it?",
        "Sort datasets by usage: `zfs list -o name,used,usedbysnapshots -s used`. With around <<snaps>> snapshots lying around, snapshots are the usual suspect. Keep the pool under 80% or ZFS gets slow.",
    ),
    (
        "Can I live-migrate VM <<vmid>> from <<host>> to <<host2>> without shared storage?",
        "Yes: `qm migrate <<vmid>> <<node2>> --online --with-local-disks`. A <<disk_gb>> GB disk over gigabit takes roughly <<mig_min>> minutes. If the storage names differ, add `--targetstorage`.",
    ),
    (
        "<<vmname>> keeps getting OOM-killed even though VM <<vmid>> has <<ram_gb>> GB with ballooning on.",
        "Ballooning lets the host reclaim memory down to the minimum (<<ram_min>> GB) when it is under pressure, and the ZFS ARC is often what pressures it. Either disable ballooning for this VM or cap the ARC at <<arc_gb>> GiB with `options zfs zfs_arc_max=<<arc_bytes>>`.",
    ),
)


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


_NAS_ID = (
    (
        "`zpool status` di <<nas>> bilang `<<zfsmsg>>`, pool `<<pool>>` <<zfsstate>>. Perlu panik?",
        "Belum perlu panik. <<zfsnote>> Setelah itu jalankan `zpool clear <<pool>>` dan scrub, lalu pantau kolom READ/WRITE/CKSUM selama seminggu.",
    ),
    (
        "rsync dari laptop ke <<nas>> cuma <<mbps>> MB/s. Padahal kabel LAN semua. Perintahku:\n```\nrsync -avz ~/Pictures/ <<nas>>:/mnt/<<dataset>>/\n```",
        "Biang keroknya kemungkinan `-z`: kompresi di LAN malah bikin CPU jadi leher botol, apalagi file foto yang sudah terkompresi. Coba:\n```\nrsync -aH --info=progress2 ~/Pictures/ <<nas>>:/mnt/<<dataset>>/\n```\nKalau masih pelan, tes jaringan murni dengan `iperf3 -c <<nas_ip>>`; gigabit harusnya dapat sekitar 110 MB/s.",
    ),
    (
        "Share `<<share>>` di <<nas>> nggak muncul di Network Windows, tapi kalau ketik alamatnya langsung bisa.",
        "Itu normal di Windows modern: discovery lama (SMB1/NetBIOS) sudah mati. Pakai `\\\\<<nas_ip>>\\<<share>>` lalu Map network drive. Kalau mau muncul lagi di Network, nyalakan WS-Discovery di pengaturan SMB NAS-nya.",
    ),
    (
        "Aku mau snapshot otomatis buat `<<dataset>>` di TrueNAS, simpan <<keep>> hari.",
        "Data Protection > Periodic Snapshot Tasks > Add:\n- Dataset: `<<dataset>>`\n- Lifetime: <<keep>> days\n- Schedule: daily jam 0<<hour>>:00\n- Naming: `auto-%Y%m%d-%H%M`\nCentang 'Allow taking empty snapshots' kalau mau pola harian tetap rapi buat replikasi.",
    ),
    (
        "Disk <<disk>> di <<nas>> suhunya <<dtemp>>°C. Hasil SMART: 5 Reallocated_Sector_Ct 0, 199 UDMA_CRC_Error_Count <<crc>>.",
        "[[Suhu segitu masih oke|Suhunya masih dalam batas]], idealnya di bawah 45°C. Reallocated 0 bagus. Kalau UDMA_CRC naik, itu biasanya kabel SATA atau backplane, bukan piringan disk. Jadwalkan long test sebulan sekali dan short test tiap minggu.",
    ),
    (
        "Export NFS dari <<nas>> buat Proxmox, tapi di Proxmox statusnya tanda tanya abu-abu.",
        "Tanda tanya artinya Proxmox nggak bisa `showmount` atau mount ke export itu. Cek:\n1. `showmount -e <<nas_ip>>` dari node Proxmox.\n2. Di export, izinkan subnet 192.168.10.0/24 atau IP node-nya.\n3. Set Maproot User ke root, kalau tidak vzdump gagal nulis.",
    ),
    (
        "Habis rsync, semua file di <<nas>> punya owner `<<uid>>` dan user lain nggak bisa edit.",
        "rsync `-a` membawa uid/gid asli dari sumber. Di tujuan, uid <<uid>> mungkin bukan siapa-siapa. Opsi: tambahkan `--chown=gading:keluarga` waktu rsync, atau benahi sekali dengan `chown -R` lalu atur ACL dataset supaya grup keluarga punya Modify.",
    ),
    (
        "<<app>> di <<nas>> minta update ke <<appver>>. Langsung klik update aja?",
        "Baca release notes dulu, terutama bagian breaking changes. Sebelum klik update, snapshot dataset app-nya, jadi kalau gagal tinggal rollback. Untuk <<app>>, database-nya sering ikut migrasi, jadi jangan putus di tengah jalan.",
    ),
    (
        "Mau pindahin <<gb>> GB dari disk USB lama ke <<nas>>. Pakai rsync atau copy biasa?",
        "rsync, biar bisa dilanjutkan kalau putus:\n```\nrsync -aH --partial --info=progress2 /media/usb-lama/ <<nas>>:/mnt/<<dataset>>/impor/\n```\nSetelah selesai, jalankan lagi dengan `--checksum --dry-run` buat memastikan nggak ada file yang beda. Kira-kira <<files>> file, jadi listing awalnya agak lama.",
    ),
)

_NAS_EN = (
    (
        "rsync to <<nas>> crawls at <<mbps>> MB/s over wired gigabit. I'm using `rsync -avz`.",
        "Drop `-z`: compression on a LAN makes the CPU the bottleneck, and photos are already compressed. Try `rsync -aH --info=progress2`, and test the raw link with `iperf3 -c <<nas_ip>>`; gigabit should give around 110 MB/s.",
    ),
    (
        "I want daily snapshots for `<<dataset>>` on TrueNAS, kept for <<keep>> days.",
        "Data Protection > Periodic Snapshot Tasks > Add, pick `<<dataset>>`, lifetime <<keep>> days, daily at 0<<hour>>:00. Use a naming schema like `auto-%Y%m%d-%H%M` so replication can match it later.",
    ),
    (
        "SMART on the <<disk>> in <<nas>>: temperature <<dtemp>>°C, UDMA_CRC_Error_Count <<crc>>. Fine?",
        "Temperature is acceptable, ideally under 45°C. A rising UDMA CRC count points at the cable or backplane rather than the platters. Schedule a weekly short test and a monthly long test.",
    ),
    (
        "After copying with rsync every file on <<nas>> is owned by uid <<uid>> and nobody else can edit.",
        "`rsync -a` keeps the source uid and gid. Add `--chown=gading:keluarga` next time, and for now fix it once with `chown -R` plus a dataset ACL that gives the family group Modify.",
    ),
    (
        "Should I update <<app>> on <<nas>> to <<appver>> right away?",
        "Read the release notes for breaking changes, snapshot the app dataset first, then update. If the migration fails, roll back the snapshot instead of debugging a half-migrated database.",
    ),
)


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


_DOCKER_ID = (
    (
        "`docker compose up -d` buat <<ctr>> gagal: `Bind for 0.0.0.0:<<port>> failed: port is already allocated`.",
        "Ada proses lain yang sudah pakai port <<port>>. Cek siapa:\n```\nsudo ss -ltnp | grep :<<port>>\ndocker ps --format '{{.Names}} {{.Ports}}' | grep <<port>>\n```\nKalau container lain, ganti mapping di compose jadi misalnya `\"1<<port>>:<<port>>\"` atau taruh di belakang reverse proxy tanpa publish port.",
    ),
    (
        "Home Assistant habis update ke <<ha_ver>>, integrasi <<integ>> jadi unavailable semua.",
        "Cek Settings > System > Logs, filter `<<integ>>`. Setelah update mayor, integrasi custom dari HACS sering belum kompatibel. Opsi cepat: update integrasinya di HACS; kalau belum ada rilis baru, restore backup HA sebelum update, dan tunggu beberapa hari.",
    ),
    (
        "Aku mau AC kamar nyala otomatis kalau <<sensor>> di atas <<thr>>°C dan ada orang di rumah.",
        'Contoh automation:\n```yaml\ntrigger:\n  - platform: numeric_state\n    entity_id: <<sensor>>\n    above: <<thr>>\n    for: "00:05:00"\ncondition:\n  - condition: state\n    entity_id: zone.home\n    state: "1"\naction:\n  - service: climate.set_temperature\n    target:\n      entity_id: climate.ac_kamar\n    data:\n      temperature: <<ac_temp>>\n      hvac_mode: cool\n```\nTambahkan jeda `for` supaya nggak nyala-mati kalau angkanya naik turun.',
    ),
    (
        "`docker system df` di <<host>> bilang images makan <<gb>> GB. Aman dihapus?",
        'Yang aman: image yang nggak dipakai container mana pun.\n```\ndocker image prune -a --filter "until=720h"\n```\nVolume jangan ikut di-prune kecuali yakin, karena data database ada di sana. Cek dulu pakai `docker system df -v`.',
    ),
    (
        "Log container <<ctr>> ternyata <<loggb>> GB sendiri. Kok bisa?",
        'Driver log default `json-file` nggak punya batas ukuran. Atur global di `/etc/docker/daemon.json`:\n```json\n{"log-driver": "json-file", "log-opts": {"max-size": "20m", "max-file": "3"}}\n```\nLalu restart daemon dan recreate container-nya; container lama tetap pakai setelan lama.',
    ),
    (
        "Uptime Kuma udah jalan dengan <<mon>> monitor. Notifikasinya enaknya lewat apa?",
        "Paling ringan ntfy: self-host di container kecil, topik misalnya `homelab-alert`, lalu pasang app ntfy di HP. Atur supaya notifikasi cuma dikirim kalau down lebih dari <<mins>> menit, biar nggak berisik waktu restart rutin.",
    ),
    (
        "Backup Home Assistant mau aku taruh ke NAS, bukan cuma di SD card.",
        "Settings > System > Storage > Add network storage, pilih Backup, isi share SMB dari NAS. Setelah itu di Backups atur jadwal harian, simpan <<days>> salinan, dan pilih lokasi NAS sebagai default. Tes restore sekali ke VM kosong biar yakin.",
    ),
    (
        "Container <<ctr>> restart terus, `docker ps -a` nunjukin `Exited (1)`.",
        "Exit code 1 itu aplikasi di dalamnya sendiri yang berhenti dengan error, bukan dibunuh sistem. Lihat `docker logs --tail 50 <<ctr>>`; biasanya variabel lingkungan yang kurang atau database belum siap waktu container start.",
    ),
    (
        "Watchtower atau update manual buat container di <<host>>?",
        "Buat yang menyimpan data penting (<<ctr>>, database), update manual dengan tag versi yang jelas. Watchtower cocok untuk yang stateless. Kompromi: Watchtower mode monitor-only yang cuma kirim notifikasi ada versi baru.",
    ),
)

_DOCKER_EN = (
    (
        "<<ctr>> keeps restarting and `docker ps -a` shows `Exited (139)`.",
        "Exit code 139 is a segmentation fault inside the container, not the OOM killer. Check `docker logs --tail 100` for the crash, and try the previous image tag; a bad build or a CPU feature the image expects are the usual causes.",
    ),
    (
        "<<ctr>> won't start: `Bind for 0.0.0.0:<<port>> failed: port is already allocated`.",
        "Something already listens on <<port>>. Find it with `sudo ss -ltnp | grep :<<port>>`. If it's another container, change the host side of the mapping or put both behind the reverse proxy without publishing ports.",
    ),
    (
        "Home Assistant <<ha_ver>> broke the <<integ>> integration, everything shows unavailable.",
        "Check Settings > System > Logs for `<<integ>>`. Custom integrations often lag behind a major release; update it in HACS, or restore the pre-update backup and wait a few days.",
    ),
    (
        "The json logs for <<ctr>> grew to <<loggb>> GB. How do I cap them?",
        "Set `max-size` and `max-file` for the json-file driver in `/etc/docker/daemon.json`, restart Docker, then recreate the container, since existing containers keep their old log settings.",
    ),
    (
        "Best way to get alerts from Uptime Kuma? I have <<mon>> monitors now.",
        "ntfy is the lightest: a small container, one topic for the homelab, the app on your phone. Only alert after <<mins>> minutes of downtime so routine restarts stay quiet.",
    ),
    (
        "Should I let Watchtower update everything on <<host>>?",
        "Not the stateful ones like <<ctr>>: pin version tags and update those by hand after reading the changelog. Watchtower in monitor-only mode is a good middle ground.",
    ),
)


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


_NETWORK_ID = (
    (
        "Aku mau kasih IP tetap buat <<dev>> di pfSense, biar nggak pindah-pindah.",
        "Services > DHCP Server > LAN > DHCP Static Mappings > Add. Isi MAC <<dev>>, IP misalnya 192.168.<<vlan>>.<<ip_last>> (di luar range dinamis), dan hostname. Setelah itu putus-sambung Wi-Fi di perangkatnya biar dapat lease baru.",
    ),
    (
        "Pi-hole hari ini blokir <<blocked>>% query. Tapi link dari grup WA ke <<domain>> nggak bisa dibuka.",
        "Domain <<domain>> memang masuk daftar tracker di banyak blocklist. Kalau memang butuh, tambahkan ke allowlist:\n```\npihole allow <<domain>>\n```\nAtau dari web UI: Domains > Allow. Setelah itu flush cache DNS di HP (matikan lalu nyalakan Wi-Fi).",
    ),
    (
        "WireGuard di <<peer>> nggak pernah handshake. Endpoint-nya ke IP publik rumah, port default.",
        "Kalau handshake nol, paketnya belum sampai. Cek berurutan:\n1. Port forward UDP 51820 di pfSense ke host WireGuard.\n2. Rule di WAN yang mengizinkan UDP 51820.\n3. IP publiknya beneran publik, bukan CGNAT dari <<isp>> (bandingkan IP di status WAN dengan whatismyip).\n4. `AllowedIPs` di server untuk <<peer>> = <<wg_ip>>/32.",
    ),
    (
        "Aku mau <<dev>> di VLAN <<vlan>> tetap bisa diakses Home Assistant yang ada di VLAN <<vlan2>>, tapi nggak bisa ke mana-mana.",
        "Di pfSense, rules di interface VLAN <<vlan>>, urut dari atas:\n1. Izinkan dari net VLAN<<vlan>> ke alamat HA, hanya port yang dibutuhkan.\n2. Blokir dari net VLAN<<vlan>> ke RFC1918 (alias semua jaringan lokal).\n3. Opsional: izinkan ke internet kalau perangkatnya butuh update.\nRule dibaca dari atas, jadi urutannya penting. Koneksi dari HA ke perangkat diizinkan di rule VLAN <<vlan2>>.",
    ),
    (
        "Internet <<isp>> cuma dapat <<down>> Mbps dari paket <<plan>> Mbps. Speedtest dari pfSense langsung.",
        "Bandingkan tiga titik: speedtest dari pfSense, dari laptop pakai kabel, dan dari Wi-Fi. Kalau dari pfSense pun cuma <<down>> Mbps, masalahnya di sisi <<isp>>: catat jam dan hasilnya tiga hari, lalu lapor dengan bukti. Kalau pfSense kencang tapi Wi-Fi lambat, itu urusan AP.",
    ),
    (
        "Update pfSense ke <<pf_ver>>, aman langsung atau tunggu?",
        "Tunggu beberapa hari dan baca forum Netgate untuk masalah paket yang kamu pakai (WireGuard, pfBlockerNG). Sebelum update: Diagnostics > Backup & Restore, unduh config XML. Kalau ada boot environment ZFS, buat snapshot dulu supaya bisa balik dari menu boot.",
    ),
    (
        "HP sering nyangkut ke AP yang jauh, padahal ada <<ap>> di ruang tengah.",
        "Itu masalah roaming klasik: HP yang memutuskan pindah, bukan AP. Yang bisa dibantu dari <<ap>>: turunkan daya transmit AP yang jauh, aktifkan 802.11k/v kalau ada, dan set minimum RSSI sekitar -75 dBm supaya klien yang sinyalnya lemah dilepas.",
    ),
    (
        "Mau coba DNS over TLS dari pfSense biar ISP nggak ngintip query. Pi-hole tetap di depan.",
        "Rantainya: klien > Pi-hole > Unbound di pfSense > upstream lewat TLS port 853. Di pfSense: Services > DNS Resolver, aktifkan 'Use SSL/TLS for outgoing DNS Queries to Forwarding Servers', isi forwarder seperti 1.1.1.1@853#cloudflare-dns.com. Di Pi-hole, upstream cuma IP pfSense.",
    ),
)

_NETWORK_EN = (
    (
        "Give <<dev>> a fixed address on pfSense?",
        "Services > DHCP Server > pick the interface > Static Mappings > Add. Use its MAC, an address such as 192.168.<<vlan>>.<<ip_last>> outside the dynamic range, and a hostname; then reconnect the device so it picks up the new lease.",
    ),
    (
        "WireGuard on <<peer>> never completes a handshake.",
        "No handshake means packets never arrive. Check the UDP 51820 port forward and WAN rule on pfSense, make sure <<isp>> hasn't put you behind CGNAT, and confirm the server's AllowedIPs for <<peer>> is <<wg_ip>>/32.",
    ),
    (
        "<<isp>> gives me <<down>> Mbps on a <<plan>> Mbps plan, measured from pfSense itself.",
        "If pfSense itself only sees <<down>> Mbps, it's upstream. Log results at different hours for three days and take that to <<isp>>; if pfSense is fast but Wi-Fi is slow, look at the access point instead.",
    ),
    (
        "I want <<dev>> on VLAN <<vlan>> to be reachable from Home Assistant on VLAN <<vlan2>> and nothing else.",
        "On the VLAN <<vlan>> interface: pass to the HA address on the ports it needs, then block to an RFC1918 alias, then optionally pass to the internet. Rules are first match, so order matters; the connection from HA is allowed on the VLAN <<vlan2>> rules.",
    ),
    (
        "Pi-hole is blocking <<domain>> and a link from a group chat won't open.",
        "That domain is on common tracker lists. If you need it, `pihole allow <<domain>>`, then toggle Wi-Fi on the phone to drop its DNS cache.",
    ),
)


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


_WORK_ID = (
    (
        "Halaman `/shipments/[id]` di Next.js masih nampilin status lama padahal DB sudah update. App Router, fetch di server component.",
        "Itu cache data Next.js. Pilihan:\n1. Kalau boleh agak basi, `export const revalidate = <<reval>>` di page itu.\n2. Kalau harus langsung, tandai fetch-nya dengan tag lalu panggil `revalidateTag` di server action setelah update status.\n3. Kalau selalu dinamis, `cache: 'no-store'`.\nUntuk status pengiriman, opsi 2 paling pas: murah tapi tetap segar.",
    ),
    (
        "Query daftar pengiriman status `in_transit` lambat, <<ms>> ms. Tabel `shipments` sekitar <<rows>> juta baris.",
        "Kirim hasil `EXPLAIN (ANALYZE, BUFFERS)`-nya. Dugaan awal: seq scan karena belum ada index yang cocok. Karena yang dicari cuma satu status, partial index biasanya paling hemat:\n```sql\nCREATE INDEX CONCURRENTLY idx_shipments_transit\n  ON shipments (updated_at DESC) WHERE status = 'in_transit';\n```\n`CONCURRENTLY` biar tabel nggak terkunci waktu jam kerja.",
    ),
    (
        "Script Python rekonsiliasi CSV dari <<vendor>> error: `UnicodeDecodeError: 'utf-8' codec can't decode byte 0x<<hexb>>`.",
        'File dari <<vendor>> kemungkinan disimpan Excel dalam cp1252, bukan UTF-8. Coba:\n```python\ndf = pd.read_csv(path, encoding="cp1252", sep=";")\n```\nKalau formatnya berubah-ubah, deteksi dulu pakai `charset_normalizer.from_path(path).best().encoding`. Simpan hasil olahan kembali sebagai UTF-8 biar langkah berikutnya nggak ketularan.',
    ),
    (
        "Mas Yoga minta PR <<ticket>> dipecah, soalnya <<files>> file berubah sekaligus.",
        "Masuk akal. Pola yang biasanya gampang di-review:\n1. PR refactor murni (rename, pindah file), tanpa perubahan perilaku.\n2. PR skema dan migrasi database.\n3. PR fitur yang pakai keduanya.\nTiap PR sebaiknya di bawah 400 baris diff dan bisa di-merge sendiri. Tulis urutan dan alasannya di deskripsi PR pertama.",
    ),
    (
        "Deploy staging gagal di `pnpm build`: `Type error: Property '<<prop>>' does not exist on type 'Shipment'`.",
        "Tipe `Shipment` kemungkinan di-generate dari skema lama. Jalankan ulang generator tipe setelah migrasi terbaru, lalu commit hasilnya. Di lokal kamu lolos karena file hasil generate-nya sudah baru tapi nggak ikut ter-commit; tambahkan langkah generate di CI sebelum build.",
    ),
    (
        "Migrasi `<<mig>>` di staging nyangkut: `canceling statement due to lock timeout`.",
        "ALTER TABLE butuh lock eksklusif, dan ada transaksi lain yang lama memegang tabelnya. Cek:\n```sql\nSELECT pid, state, now() - xact_start AS umur, left(query, 60)\nFROM pg_stat_activity WHERE state <> 'idle' ORDER BY umur DESC;\n```\nBiasanya worker yang lupa commit. Jalankan migrasinya di luar jam sibuk dengan `SET lock_timeout = '5s'` dan retry, daripada menunggu lama dan bikin antrean query lain.",
    ),
    (
        "Form alamat: zod bilang `Expected string, received null` buat kode pos.",
        "Data dari DB mengirim `null` untuk kode pos kosong. Di skema: `postalCode: z.string().nullable()`, atau ubah ke string kosong dengan `.transform`. Pilih satu kontrak dan samakan di API dan form, biar nggak ada dua representasi untuk 'kosong'.",
    ),
    (
        "Tolong rangkum buat standup: kemarin beresin <<ticket>>, hari ini lanjut <<ticket2>>, blocker nunggu API dari tim <<team>>.",
        "**Kemarin:** <<ticket>> selesai dan sudah di-review.\n**Hari ini:** lanjut <<ticket2>>.\n**Blocker:** menunggu endpoint dari tim <<team>>; kalau belum ada sampai siang, aku pakai mock dulu supaya UI tetap jalan.",
    ),
    (
        "Worker Python yang kirim notifikasi WA ke kurir kadang dobel, kemarin ada <<dup>> kurir dapat dua kali.",
        "Itu gejala at-least-once: job di-retry setelah pesan sebenarnya sudah terkirim. Simpan kunci idempoten (misal `shipment_id` + jenis notifikasi) di tabel dengan UNIQUE constraint, insert dulu sebelum kirim, dan lewati kalau insert-nya konflik.",
    ),
)

_WORK_EN = (
    (
        "The `/shipments/[id]` page in Next.js keeps showing a stale status after we update the row.",
        "That's the data cache. Tag the fetch and call `revalidateTag` from the server action after the update; `export const revalidate = <<reval>>` is fine if a little staleness is acceptable, and `cache: 'no-store'` if it must always be live.",
    ),
    (
        "Listing `in_transit` shipments takes <<ms>> ms on a table with about <<rows>> million rows.",
        "Get `EXPLAIN (ANALYZE, BUFFERS)` first. If it's a sequential scan, a partial index on `updated_at` with `WHERE status = 'in_transit'` is small and fast; build it `CONCURRENTLY` during office hours.",
    ),
    (
        "The <<vendor>> reconciliation CSV fails with `UnicodeDecodeError ... byte 0x<<hexb>>`.",
        'It\'s probably cp1252 from Excel. Read it with `encoding="cp1252"`, or detect the encoding with charset_normalizer when vendors vary, and write your output back as UTF-8.',
    ),
    (
        "Standup summary please: finished <<ticket>> yesterday, continuing <<ticket2>>, blocked on the <<team>> team's API.",
        "**Yesterday:** <<ticket>> done and reviewed.\n**Today:** <<ticket2>>.\n**Blocker:** waiting on the <<team>> team's endpoint; I'll build against a mock until it lands.",
    ),
    (
        "Yoga wants me to split <<ticket>>: <<files>> files changed in one PR.",
        "Split it into a pure refactor, then the schema and migration, then the feature on top. Keep each under about 400 lines of diff and explain the order in the first PR's description.",
    ),
    (
        "Migration `<<mig>>` timed out on staging: `canceling statement due to lock timeout`.",
        "ALTER TABLE needs an exclusive lock and something held a long transaction. Look at `pg_stat_activity` ordered by transaction age, fix the worker that forgot to commit, and retry with a short `lock_timeout` outside peak hours.",
    ),
    (
        "Staging Postgres says `sorry, too many clients already` (max_connections <<clients>>).",
        "Each serverless function opens its own pool. Put PgBouncer in transaction mode in front, lower the per-instance pool to 1 or 2, and keep `max_connections` where it is.",
    ),
)


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


_RAMADAN_ID = (
    (
        "Stok kulkas tinggal <<stok>>. Sahur besok masak apa yang cepat, maksimal 15 menit?",
        "Dari <<stok>>, yang cepat: tumis semua jadi satu dengan bawang putih dan kecap, plus telur dadar atau rebus. Siapkan bumbu dan potong sayur malam ini, jadi jam 3 pagi tinggal nyalakan kompor. Tambahkan buah atau kurma biar gulanya nggak cuma dari nasi.",
    ),
    (
        "Jadwal dari masjid: imsak <<imsak>>, subuh <<subuh>>, magrib <<magrib>>. Bikinin pengingat di Home Assistant 10 menit sebelum imsak dong.",
        "Buat helper `input_datetime.imsak` berisi <<imsak>>, lalu automation:\n```yaml\ntrigger:\n  - platform: template\n    value_template: >\n      {{ now().strftime('%H:%M') ==\n         (today_at(states('input_datetime.imsak')) - timedelta(minutes=10)).strftime('%H:%M') }}\naction:\n  - service: tts.google_translate_say\n    data:\n      entity_id: media_player.speaker_dapur\n      message: \"Sepuluh menit lagi imsak\"\n```\nJamnya tinggal diganti tiap beberapa hari sesuai jadwal masjid.",
    ),
    (
        "Puasa hari ke-<<rday>>, jam dua siang ngantuk berat di kantor. Ada trik?",
        "Yang paling membantu biasanya: tidur siang 15 sampai 20 menit setelah zuhur, jalan sebentar atau naik tangga, dan jangan menumpuk kerjaan berat di jam 13.00 sampai 15.00. Di rumah, geser tidur lebih awal; sahur jangan terlalu banyak karbohidrat sederhana supaya nggak cepat lemas.",
    ),
    (
        "Tarawih di masjid <<masjid>> selesai jam <<tarawih_end>>. Tidurku jadi berantakan.",
        "Coba hitung mundur: kalau sahur bangun jam 03.10, tidur jam 22.00 sudah cuma dapat sekitar lima jam. Opsi: tarawih di rumah di hari kerja dan ke masjid di akhir pekan, atau pilih masjid yang selesai lebih cepat. Tidur siang singkat di kantor menambal sisanya.",
    ),
    (
        "Zakat fitrah di masjid <<masjid>> tahun ini Rp<<zakat>> per orang. Buat aku, Kak Rina, sama Ibu berarti berapa?",
        "Tiga orang kali Rp<<zakat>>, jadi Rp<<zakat3>>. Bayar sebelum salat Id; banyak masjid menutup penerimaan sehari sebelumnya, jadi lebih aman dibayar akhir pekan ini. Minta tanda terimanya untuk catatan keluarga.",
    ),
    (
        "Aku pesan nastar <<nastar>> toples ke tetangga, Rp<<nastar_price>> per toples. Masuk pos anggaran mana ya?",
        "Masukkan ke pos 'Lebaran' yang terpisah dari makan harian, biar kelihatan total biaya lebaran sekaligus (kue, THR keponakan, baju, ongkos mudik). Untuk catatan: <<nastar>> toples x Rp<<nastar_price>>.",
    ),
    (
        "Seminggu ini beli takjil terus, total Rp<<takjil>>. Kebanyakan nggak sih?",
        "Lumayan untuk seminggu, apalagi kalau sebagian nggak habis. Coba aturan sederhana: takjil beli maksimal tiga kali seminggu, sisanya bikin sendiri seperti kolak atau es buah dari stok rumah. Catat juga di aplikasi keuangan dengan kategori sendiri.",
    ),
    (
        "Cari baju koko buat lebaran, budget Rp<<koko>>. Beli online atau ke Tanah Abang?",
        "Dengan budget Rp<<koko>>, online lebih praktis tapi ukuran sering meleset; kalau sempat, coba dulu di toko. Jangan mepet: minggu terakhir Ramadan ongkir dan antrean kurir biasanya melonjak.",
    ),
)

_RAMADAN_EN = (
    (
        "Fasting day <<rday>>. Is it okay to run before iftar?",
        "Keep it easy: 30 to 40 minutes at conversational effort, finishing right around iftar so you can drink immediately. Save intervals for after breaking the fast or for the weekend.",
    ),
    (
        "Planning iftar with college friends at <<resto>>, <<people>> people, about Rp<<pp>> each.",
        "Book ahead: places fill up in the last two weeks of Ramadan. Ask for a table from 17:30, order takjil to be served at maghrib, and agree on splitting the bill before you go.",
    ),
    (
        "Zakat al-fitr is Rp<<zakat>> per person at <<masjid>> this year. For three of us?",
        "Three times Rp<<zakat>> is Rp<<zakat3>>. Pay it before Eid prayer; most mosques close collection the day before, so this weekend is safer.",
    ),
)


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


_FAMILY_ID = (
    (
        "Ibu cek tensi pagi ini <<sys>>/<<dia>>. Obatnya amlodipin 5 mg, diminum rutin.",
        "Satu angka belum bisa disimpulkan. Minta Ibu ukur pagi dan malam selama seminggu, duduk tenang lima menit dulu, dan catat. Kalau rata-ratanya tetap di atas 140/90, bawa catatannya ke dokter. Aku bisa bantu bikin tabel sederhana atau input manual di Home Assistant.",
    ),
    (
        "Giliran aku jadi tuan rumah arisan keluarga, sekitar <<arisan>> orang. Menu apa yang gampang?",
        "Untuk <<arisan>> orang: nasi liwet satu panci besar, ayam goreng ungkep (bisa disiapkan sehari sebelumnya), sayur asem, sambal, kerupuk, dan buah. Pesan satu menu utama dari katering kalau mau lebih santai.",
    ),
    (
        "Keponakanku <<nephew>> ulang tahun ke-<<age>>. Kado apa yang nggak bikin rumah berantakan?",
        "Untuk umur <<age>>: buku cerita bergambar, set LEGO kecil, atau pengalaman bareng seperti tiket ke museum atau planetarium. Tanya orang tuanya dulu apa yang sudah punya.",
    ),
    (
        "Atap dapur bocor lagi waktu hujan deras semalam. Tukang minta Rp<<tukang>> buat ganti genteng dan lapisi talang.",
        "Harga segitu wajar kalau termasuk bahan. Minta dia cek juga sambungan talang dan lapisan di sekitar cerobong, karena bocor sering dari situ. Foto sebelum dan sesudah, dan tanya garansi kalau bocor lagi dalam sebulan.",
    ),
    (
        "Tolong bikin ucapan singkat buat ulang tahun pernikahan ke-<<years>> Om <<om>> dan Tante, buat grup keluarga.",
        '"Selamat ulang tahun pernikahan yang ke-<<years>>, Om <<om>> dan Tante! Terima kasih sudah jadi teladan buat kami semua. Semoga sehat selalu dan makin bahagia. Salam dari Depok."',
    ),
)

_FAMILY_EN = (
    (
        "Ibu's blood pressure was <<sys>>/<<dia>> this morning. She's on amlodipine 5 mg.",
        "One reading says little. Have her measure morning and evening for a week after five quiet minutes, write it down, and take the log to her doctor if the average stays above 140/90.",
    ),
    (
        "My nephew <<nephew>> turns <<age>>. Gift ideas that won't clutter their house?",
        "A picture book, a small LEGO set, or an outing such as a museum or planetarium trip. Check with his parents what he already has.",
    ),
    (
        "The kitchen roof leaked again last night. The handyman quoted Rp<<tukang>> for tiles and gutter sealing.",
        "That's reasonable if materials are included. Ask him to check the gutter joints too, take photos before and after, and ask what happens if it leaks again within a month.",
    ),
)


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


_RUN_ID = (
    (
        "Lari pagi tadi <<km>> km di <<place>>, pace rata-rata <<pace>>/km, HR rata-rata <<hr>>.",
        "Dengan HR <<hr>>, itu lebih ke tempo ringan daripada easy. Kalau niatnya lari santai, turunkan pace sampai bisa ngobrol kalimat penuh. Catat juga sepatu dan cuacanya; pagi yang lembap bikin HR naik 5 sampai 10 denyut.",
    ),
    (
        "Sepatu <<shoe>> udah <<shoe_km>> km. Waktunya ganti?",
        "Kebanyakan sepatu lari mulai kehilangan bantalan di 500 sampai 800 km. Tanda praktis: lutut atau telapak mulai pegal di lari yang biasanya enteng, atau busanya berkerut dalam. Beli penggantinya dulu, pakai bergantian dua minggu.",
    ),
    (
        "Tidur cuma <<sleep>> jam, HRV turun ke <<hrv>> ms. Tetap interval hari ini?",
        "Geser intervalnya. Dengan tidur segitu dan HRV turun, hari ini cukup lari easy 30 menit atau istirahat total. Interval yang dipaksa waktu kurang tidur lebih banyak risiko cedera daripada manfaatnya.",
    ),
    (
        "Betis kanan kencang setelah interval <<reps>>x400 m kemarin sore.",
        "Kencang tanpa nyeri tajam biasanya cuma pegal otot. Foam roll pelan, jalan santai, dan lari easy kalau sudah enakan. Kalau ada titik nyeri yang tajam saat ditekan atau makin sakit waktu lari, berhenti dan periksakan.",
    ),
    (
        "Lari <<km>> km di <<place>> bareng teman kantor, pace <<pace>>. Enak juga lari rame-rame.",
        "Lari bareng bikin pace lebih stabil dan nggak kerasa jaraknya. Asal jangan semua lari jadi balapan: jadikan yang bareng teman ini lari santai, dan simpan sesi keras untuk jadwalmu sendiri.",
    ),
)

_RUN_EN = (
    (
        "Ran <<km>> km around <<place>> this morning, <<pace>>/km, average HR <<hr>>.",
        "At HR <<hr>> that's closer to a steady run than an easy one. If it was meant to be easy, slow down until you can speak full sentences; humid mornings add 5 to 10 beats anyway.",
    ),
    (
        "My <<shoe>> have <<shoe_km>> km on them. Replace?",
        "Most trainers lose cushioning somewhere between 500 and 800 km. If easy runs start to feel harsh, buy the next pair and rotate them for a couple of weeks.",
    ),
    (
        "Slept <<sleep>> hours and HRV dropped to <<hrv>> ms. Still do intervals?",
        "Move them. An easy 30 minutes or a rest day is the better call; forcing intervals on poor sleep costs more than it gives.",
    ),
    (
        "Right calf is tight after <<reps>>x400 m yesterday.",
        "Tightness without sharp pain is usually just fatigue. Foam roll gently, walk, and run easy once it settles; stop and get it checked if a spot hurts sharply.",
    ),
)


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


_BUDGET_ID = (
    (
        "Rekap pengeluaran minggu ini: makan Rp<<food>>, transport Rp<<trans>>, kopi Rp<<coffee>>.",
        "Kopi Rp<<coffee>> seminggu itu kalau dikali empat lumayan. Makan Rp<<food>> masih wajar kalau sudah termasuk makan siang kantor. Saran: tetapkan batas mingguan untuk kopi, dan catat di hari yang sama biar nggak lupa.",
    ),
    (
        "Langgananku: Netflix, Spotify, YouTube Premium, sama iCloud <<icloud>> GB. Mana yang dipangkas?",
        "Lihat mana yang dipakai minggu ini. Foto sudah ke Immich di NAS, jadi iCloud <<icloud>> GB mungkin bisa turun paket. Netflix bisa putar: langganan sebulan, berhenti sebulan. Spotify dan YouTube Premium sering tumpang tindih untuk musik.",
    ),
    (
        "Tagihan listrik bulan ini Rp<<listrik>>. Homelab makan sekitar <<watt>> W terus-terusan. Berapa porsinya?",
        "<<watt>> W x 24 jam x 30 hari = sekitar <<kwh>> kWh. Dengan tarif Rp1.444,70 per kWh, itu kira-kira Rp<<rp_kwh>> sebulan dari homelab saja. Kalau mau hemat, jadwalkan node kedua mati di jam tidur atau pindahkan layanan ringan ke satu mesin.",
    ),
    (
        "Harga <<disk>> sekarang Rp<<hdd>>. Beli sekarang buat cadangan atau nanti aja?",
        "Kalau pool-mu mirror dan disk lama sudah lewat tiga tahun, punya satu cadangan di laci itu masuk akal. Kalau masih muda dan SMART bersih, tunggu promo tanggal kembar; biasanya turun 10 sampai 15 persen.",
    ),
    (
        "Mau mulai reksa dana pasar uang Rp<<rdpu>> per bulan. Dari gaji langsung autodebet?",
        "Autodebet di hari gajian paling ampuh, biar uangnya pergi sebelum sempat dipakai. Reksa dana pasar uang cocok untuk dana darurat atau tujuan di bawah dua tahun; untuk jangka panjang pertimbangkan campuran indeks saham.",
    ),
)

_BUDGET_EN = (
    (
        "This week's spending: food Rp<<food>>, transport Rp<<trans>>, coffee Rp<<coffee>>.",
        "Coffee at Rp<<coffee>> a week adds up over a month. Food looks fine if it covers office lunches. Set a weekly cap for coffee and log it on the same day.",
    ),
    (
        "My homelab draws about <<watt>> W all the time. How much of the Rp<<listrik>> power bill is that?",
        "<<watt>> W around the clock is about <<kwh>> kWh a month; at Rp1,444.70 per kWh that's roughly Rp<<rp_kwh>>. Powering down the second node overnight is the easiest saving.",
    ),
    (
        "Netflix, Spotify, YouTube Premium and iCloud <<icloud>> GB. Which should go?",
        "Photos already go to Immich on the NAS, so the iCloud tier can probably shrink. Rotate Netflix month on, month off, and pick one of Spotify or YouTube Premium for music.",
    ),
)


_BOOKS = [
    ("Bumi Manusia", "Minke dan Annelies", "Minke and Annelies"),
    ("Cantik Itu Luka", "Dewi Ayu", "Dewi Ayu"),
    ("Designing Data-Intensive Applications", "bab replikasi", "the replication chapter"),
    ("The Phoenix Project", "Brent yang jadi leher botol", "Brent being the bottleneck"),
    ("Project Hail Mary", "Rocky", "Rocky"),
    ("Filosofi Teras", "dikotomi kendali", "the dichotomy of control"),
    ("Sapiens", "revolusi pertanian", "the agricultural revolution"),
    ("Ronggeng Dukuh Paruk", "Srintil", "Srintil"),
]


def _slots_reading(rng: random.Random) -> dict[str, object]:
    book, part_id, part_en = rng.choice(_BOOKS)
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


_READING_ID = (
    (
        "Lagi baca <<book>>, udah halaman <<page>>. Bagian <<part_id>> bikin mikir.",
        "Bagian itu memang titik baliknya. Apa yang paling kena buat kamu: tokohnya, atau cara penulis menggambarkan zamannya? Kalau mau, tulis tiga kalimat catatan sekarang selagi masih segar; nanti enak buat diingat lagi.",
    ),
    (
        "Rekomendasi buku nonfiksi soal <<theme>> dong, yang nggak terlalu tebal.",
        "Untuk <<theme>>, mulai dari yang di bawah 300 halaman dan ditulis untuk pembaca umum. Baca ulasan dua atau tiga orang yang seleranya mirip kamu, dan pinjam dulu di iPusnas kalau ada sebelum beli.",
    ),
    (
        "Target baca tahun ini <<target>> buku, baru <<done>>. Kayaknya nggak kekejar.",
        "Sisa bulan masih banyak. <<mins>> menit sehari sebelum tidur, ganti scroll HP, biasanya cukup untuk satu buku tiap dua sampai tiga minggu. Selingi yang tipis dan ringan biar momentumnya terjaga.",
    ),
)

_READING_EN = (
    (
        "Reading <<book>>, page <<page>>. The part about <<part_en>> got me thinking.",
        "That's where the book turns. What struck you more: the character, or how the author sets up the period? Jot three sentences now while it's fresh.",
    ),
    (
        "Any non-fiction on <<theme_en>> that isn't huge?",
        "Start with something under 300 pages written for general readers, and borrow it from iPusnas or a friend before buying.",
    ),
    (
        "My goal is <<target>> books this year and I'm at <<done>>.",
        "<<mins>> minutes a night instead of scrolling gets you a book every two or three weeks. Mix in short ones to keep momentum.",
    ),
)


# --- scenes: hand-written sessions that carry the questions' facts ---------------------
#
# Day indices count from ``start`` (0 = 2 March 2026 by default: Ramadan is under way,
# Idul Fitri falls on day 18). ``<<dN_id>>`` / ``<<dN_en>>`` / ``<<dN_iso>>`` name day N,
# and ``<<ref>>`` / ``<<ref_id>>`` / ``<<ref_en>>`` the day of the scene named in ``ref``.

_SCENES: tuple[_Scene, ...] = (
    _Scene(
        day=1,
        lang="id",
        window="m",
        at="06:54",
        name="mudik_ticket",
        keys=("mudik_ticket",),
        topic="ramadan",
        text="""
U> Pagi. Jam 07.00 nanti KAI buka kursi tambahan buat keberangkatan <<d16_id>>. Aku mau war tiket Taksaka dari Gambir ke Yogyakarta, tiga orang: aku, Kak Rina, sama Ibu.
A> Oke, strategi singkat:
- Login KAI Access dari sekarang, jangan nunggu jam 7 pas.
- Simpan data penumpang (NIK Kak Rina dan Ibu) di daftar penumpang, jadi tinggal centang.
- Siapkan cara bayar yang paling cepat; virtual account kadang telat terkonfirmasi.
- Kalau muncul antrean virtual, jangan di-refresh, posisimu malah diulang dari belakang.
U> Ibu maunya duduk dekat jendela. Ambil eksekutif aja ya, selisihnya nggak jauh.
A> Bisa. Di denah eksekutif, kursi A dan D itu jendela. Kalau dapat satu baris, ambil A dan B buat Ibu dan Kak Rina, kamu di baris belakangnya.
U> Masuk antrean, posisi 4.812 😅
A> Wajar untuk pembukaan kursi tambahan. Antrean biasanya turun cepat di sepuluh menit pertama. Biarkan tab itu terbuka dan HP jangan sampai terkunci.
U> Dapet!! Taksaka pagi, gerbong eksekutif 3, kursi 9A, 9B, 10A. Total Rp1.320.000 bertiga, bayar lewat BCA mobile.
A> Mantap. Simpan kode pemesanannya di tempat yang gampang dicari. Catatan buat hari H:
- Boarding bisa pakai face recognition di Gambir, tapi bawa KTP.
- Datang paling lambat 30 menit sebelum berangkat; jalur masuk Gambir ramai sekali menjelang lebaran.
U> Kode pemesanan X7KQ2P, aku taruh di catatan keluarga. Baliknya nanti dulu, Kak Rina masih nunggu kepastian cuti.
A> Siap. Nanti kita pasang pengingat buat cek jadwal balik, sekitar tiga hari setelah lebaran biasanya kursi tambahan dibuka lagi.
""",
    ),
    _Scene(
        day=2,
        lang="id",
        window="m",
        agent="zed",
        name="boot_order",
        keys=("boot_order",),
        topic="proxmox",
        text="""
U> Pagi! Aku mau lanjut setup boot order server homelab di Proxmox. Waktu listrik padam 20 menit kemarin, pas nyala lagi semua VM start barengan, terus app-inventori error karena Postgres belum siap.
A> Oke. Di Proxmox urutannya diatur per VM: buka VM > Options > Start/Shutdown order. Ada tiga isian:
- **Start at boot**: centang.
- **Start/Shutdown order**: angka kecil dinyalakan duluan dan dimatikan paling akhir.
- **Startup delay**: jeda dalam detik sebelum VM berikutnya dinyalakan.
VM mana saja yang saling bergantung?
U> VM 105 `pg-main` (Postgres 16), VM 110 `app-inventori` (Next.js plus worker), VM 112 `metabase`. App sama Metabase dua-duanya konek ke pg-main.
A> Usulan:
| VM | Nama | Order | Startup delay |
|---|---|---|---|
| 105 | pg-main | 1 | 45 |
| 110 | app-inventori | 2 | 10 |
| 112 | metabase | 3 | 0 |
Lewat CLI:
```
qm set 105 --onboot 1 --startup order=1,up=45
qm set 110 --onboot 1 --startup order=2,up=10
qm set 112 --onboot 1 --startup order=3
```
Dengan `up=45`, Proxmox menunggu 45 detik setelah pg-main start sebelum menyalakan app-inventori.
U> 45 detik cukup? Postgres-nya kadang replay WAL agak lama kalau matinya nggak bersih.
A> Delay itu cuma jeda waktu, bukan cek kesehatan. Supaya aman, tambahkan retry di aplikasinya: app-inventori mencoba konek ulang tiap 5 detik sampai 2 menit sebelum menyerah. Urutan di Proxmox plus retry di aplikasi saling melengkapi.
U> Oke udah aku set. Ngetesnya gimana tanpa nunggu mati lampu beneran?
A> Reboot host di jam sepi: `systemctl reboot` di pve-01.lan. Setelah naik, lihat Tasks di web UI: harus ada "Start VM 105", jeda sekitar 45 detik, lalu "Start VM 110". Cek juga `journalctl -u pve-guests -b`.
U> Udah reboot. Bener, pg-main duluan, app-inventori nyala 47 detik kemudian dan langsung konek.
A> Mantap. Satu catatan: urutan shutdown kebalikannya. Waktu host dimatikan, metabase dan app-inventori berhenti dulu, pg-main terakhir, jadi nggak ada tulisan setengah jadi ke database.
""",
    ),
    _Scene(
        day=3,
        lang="id",
        window="m",
        name="sahur_rota",
        keys=("sahur_rota",),
        topic="ramadan",
        text="""
U> Barusan ngobrol sama Kak Rina soal pembagian tugas sahur sampai akhir Ramadan. Tolong rapikan jadi tabel ya.
A> Boleh. Ceritakan kesepakatannya, nanti aku susun.
U> Aku masak hari Senin, Rabu, Jumat, Minggu. Kak Rina Selasa, Kamis, Sabtu. Yang masak bangun duluan jam 03.10, yang satunya bangunin Ibu jam 03.35. Makan mulai 03.45, imsak di Depok sekitar 04.28.
A> Ini tabelnya:
| Hari | Masak (bangun 03.10) | Bangunin Ibu (03.35) |
|---|---|---|
| Senin | Gading | Kak Rina |
| Selasa | Kak Rina | Gading |
| Rabu | Gading | Kak Rina |
| Kamis | Kak Rina | Gading |
| Jumat | Gading | Kak Rina |
| Sabtu | Kak Rina | Gading |
| Minggu | Gading | Kak Rina |
Makan 03.45, berhenti makan 04.20 supaya ada jeda sebelum imsak.
U> Satu lagi: belanja mingguan tiap Sabtu pagi di Pasar Kemiri Muka, gantian juga. Minggu ini aku.
A> Dicatat: belanja Sabtu pagi bergiliran, mulai dari kamu. Mau aku tambahkan daftar belanja dasar? Telur, tempe, sayur, buah, kurma, susu buat Ibu.
U> Boleh. Terus kalau salah satu lembur atau tidur kemalaman, boleh tukar hari asal kabarin di grup keluarga sebelum jam 22.00.
A> Aturan tukar hari masuk catatan: kabari di grup keluarga paling lambat 22.00. Tabel ini bisa kamu sematkan di grup biar Ibu juga tahu siapa yang bangunin.
U> Sip, udah aku pin. Kak Rina setuju semua.
A> Bagus. Semoga lancar sampai akhir bulan, dan jangan lupa alarm 03.10 dipasang di HP yang nggak mode senyap.
""",
    ),
    _Scene(
        day=4,
        lang="id",
        window="e",
        name="zfs8a",
        keys=("zfs8a",),
        topic="nas",
        text="""
U> Malam. `zpool status -v tank` di nas-utama tiba-tiba begini:
```
  pool: tank
 state: ONLINE
status: One or more devices has experienced an error resulting in data
        corruption.  Applications may be affected.
action: Restore the file in question if possible.  Otherwise restore the
        entire pool from backup.
   see: https://openzfs.github.io/openzfs-docs/msg/ZFS-8000-8A
errors: Permanent errors have been detected in the following files:
        /mnt/tank/foto/2019/IMG_4471.HEIC
```
A> ZFS-8000-8A artinya ada blok yang rusak permanen dan tidak bisa diperbaiki dari salinan lain, jadi file itu benar-benar korup. Pool-nya sendiri tetap ONLINE. Langkahnya:
1. Ambil file itu dari cadangan lain.
2. Hapus file yang korup, lalu salin versi yang bagus.
3. `zpool clear tank`, lalu `zpool scrub tank`.
4. Pantau kolom CKSUM per disk. Kalau cuma satu disk yang naik, curigai disk atau kabelnya.
U> Pool-ku mirror dua disk. Kok bisa dua-duanya nggak punya salinan yang bagus?
A> Kemungkinan datanya sudah rusak waktu ditulis, misalnya di RAM, jadi kedua sisi mirror menerima data yang sama-sama salah. Server-mu pakai RAM non-ECC kan? Itu jalur yang paling umum.
U> Iya non-ECC. Fotonya dari 2019, untung masih ada di Google Photos lama. Udah aku ganti filenya.
A> Bagus. Sekarang clear dan scrub. Selama scrub jalan, pantau `zpool status -v tank`; daftar error biasanya baru hilang setelah scrub kedua yang bersih.
U> Scrub selesai, 0 errors. CKSUM semua disk 0.
A> Berarti kemungkinan kejadian sekali. Jalankan memtest86 semalaman akhir pekan ini untuk memastikan RAM-nya sehat, karena kerusakan yang dibawa RAM bisa muncul lagi di file lain.
""",
    ),
    _Scene(
        day=5,
        lang="id",
        window="e",
        name="bukber_team",
        keys=("bukber_team",),
        topic="ramadan",
        text="""
U> Malam. Aku kebagian ngurus bukber tim dev tadi, delapan orang termasuk Mas Yoga dan Mbak Tari. Tempatnya Sate Khas Senayan di Margo City, reservasi atas namaku jam 17.30.
A> Seru. Ada yang perlu dibereskan setelah acaranya?
U> Tagihannya Rp1.840.000 dan aku yang talangin dulu. Tolong hitung per orang. Mbak Tari nggak makan nasi, dia minta dipotong Rp20.000.
A> Hitungannya:
- Rata-rata: Rp1.840.000 / 8 = Rp230.000.
- Mbak Tari: Rp230.000 - Rp20.000 = Rp210.000.
- Selisih Rp20.000 dibagi ke 7 orang lain, sekitar Rp2.857 per orang, dibulatkan jadi Rp233.000.
Total terkumpul Rp1.841.000, lebih Rp1.000 dari tagihan.
U> Lebih seribu nggak apa-apa, anggap buat parkir. Bikinin pesan buat grup WA tim dong.
A> "Teman-teman, makasih udah datang ke bukber tadi! Total tagihan Rp1.840.000. Bagiannya: Mbak Tari Rp210.000, yang lain Rp233.000. Transfer ke BCA a.n. Gading ya, paling lambat Senin. Makasih! 🙏"
U> Udah kekirim. Mas Yoga langsung transfer, katanya tahun depan bukbernya di tempat yang sama aja.
A> Berarti sukses. Catat kontak reservasinya, tempat itu penuh di dua minggu terakhir Ramadan, jadi tahun depan pesan lebih awal.
""",
    ),
    _Scene(
        day=6,
        lang="id",
        window="e",
        name="porch_light",
        keys=("porch_light",),
        topic="docker",
        text="""
U> Malam. Aku mau lampu teras nyala sendiri pas mulai gelap, terus mati jam 23.00. Lampunya pakai smart plug Tapo P100, udah masuk Home Assistant sebagai `switch.lampu_teras`.
A> Pakai trigger matahari:
```yaml
alias: Lampu teras sore
trigger:
  - platform: sun
    event: sunset
    offset: "-00:15:00"
action:
  - service: switch.turn_on
    target:
      entity_id: switch.lampu_teras
```
Offset `-00:15:00` artinya nyala 15 menit sebelum matahari terbenam. Untuk mematikan, automation kedua dengan trigger `time` jam 23:00.
U> Kenapa nggak pakai sensor cahaya aja?
A> Bisa, tapi sensor cahaya di teras sering ketipu lampu jalan atau mendung tebal, lalu nyala-mati beberapa kali. Posisi matahari itu pasti dan nggak butuh perangkat tambahan.
U> Oke pakai sunset. Sekalian, waktu magrib aku mau speaker dapur bilang "waktunya berbuka".
A> Automation terpisah dengan trigger `sun` event `sunset` tanpa offset, action `tts.google_translate_say` ke `media_player.speaker_dapur` dengan pesan "Waktunya berbuka puasa". Terbenamnya matahari dan magrib selisih satu sampai dua menit, cukup dekat untuk pengingat.
U> Udah aktif. Aku tes pakai "Run actions" di automation-nya, lampu teras langsung nyala.
A> Sesuai. Mulai besok lampu akan nyala sendiri sekitar 15 menit sebelum magrib, dan karena jam terbenam bergeser tiap hari, automation ini ikut bergeser tanpa perlu diubah.
""",
    ),
    _Scene(
        day=7,
        lang="en",
        window="e",
        name="ups_battery",
        keys=("ups_battery",),
        topic="proxmox",
        text="""
U> The APC BX1100 in the rack started beeping every few minutes yesterday and its self-test failed. The cells inside were from 2022.
A> A failed self-test plus periodic beeping almost always means the battery can no longer hold voltage under load. Sealed lead-acid cells last about three to four years in a warm room, so 2022 cells were due. Did you check the label inside the battery door for the size?
U> Two 12V 9Ah cells. Got a pair from a shop in Glodok this morning, Rp270k each, and swapped them before lunch: shut down pve-01 and the switch, unplugged the unit, took a photo of the red and black leads, connected the new pair the same way.
A> That's the right order. Sealed cells ship partly charged, so the self-test only means something after a full charge. Once it's full, check what NUT reports from pve-01: `upsc apc@localhost battery.charge` and `battery.runtime`.
U> It's been charging since noon. Self-test just passed: battery.charge 100, battery.runtime 840.
A> 840 seconds is 14 minutes of runtime for pve-01 plus the switch, healthy for a load of about 90 W. Now set the shutdown threshold so NUT powers pve-01 down when runtime drops below 300 seconds; that leaves room for the VMs to stop in order.
U> Set it in upsmon. Also wrote the swap on a sticker on the unit so I know when to do it again.
A> Nice habit. Put a reminder in your calendar for early 2029 as well, and run a self-test every three months so a weak cell shows up before a blackout does.
""",
    ),
    _Scene(
        day=8,
        lang="en",
        window="a",
        agent="zed",
        name="hydration",
        keys=("hydration",),
        topic="work",
        text="""
U> Hydration error on the delivery ETA card in Next.js: `Text content does not match server-rendered HTML. Server: "07.30" Client: "14:30"`.
A> Two things differ between server and client here: the time zone and the locale. The server container runs in UTC, so 14:30 Jakarta time becomes 07.30, and it formats with a different locale than the browser. Where does the card format the time?
U> `new Date(eta).toLocaleTimeString()` inside the component, no arguments.
A> That's it. Without arguments, `toLocaleTimeString` uses whatever locale and zone the runtime has. Make both sides explicit with one shared helper:
```ts
const etaFormat = new Intl.DateTimeFormat("id-ID", {
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "Asia/Jakarta",
});
export const formatEta = (iso: string) => etaFormat.format(new Date(iso));
```
Then the server and the browser produce the same string.
U> Should I also set TZ in the container?
A> You can set `TZ=Asia/Jakarta` for logs, but don't rely on it for rendering; the browser of a courier in Makassar would still be in a different zone. The explicit `timeZone` option is what fixes the mismatch.
U> Replaced it in four places, pushed as LOG-2734. The warning is gone in dev and on staging.
A> Good. Add a small test that renders `formatEta` for a fixed ISO string so nobody reintroduces the bare call, and mention in the PR why `suppressHydrationWarning` is not the fix.
""",
    ),
    _Scene(
        day=9,
        lang="id",
        window="e",
        name="vlan47",
        keys=("vlan47",),
        topic="network",
        text="""
U> Malam. Empat kamera Reolink buat teras, garasi, samping, dan belakang udah datang. Aku mau mereka di jaringan sendiri yang nggak bisa ke internet.
A> Bikin VLAN khusus kamera. Berapa ID-nya?
U> Aku pakai VLAN 47, subnet 192.168.47.0/24. Switch-nya TP-Link TL-SG108E, port 5 sampai 8 ke kamera pakai PoE injector.
A> Langkahnya:
1. pfSense: Interfaces > Assignments > VLANs, tambah tag 47 di interface LAN fisik, lalu assign sebagai `CCTV` dengan IP 192.168.47.1/24 dan DHCP 192.168.47.100-150.
2. Switch: 802.1Q, port 5-8 untagged VLAN 47 dengan PVID 47, port uplink ke pfSense tagged 47.
3. Firewall di interface CCTV: pass ke IP Frigate di port RTSP 554, lalu block semuanya, termasuk internet.
4. Di interface tempat Frigate berada, izinkan koneksi ke net CCTV port 554.
U> Kamera butuh NTP, kalau diblok semua jamnya ngaco.
A> Betul. Tambahkan rule pass UDP 123 ke 192.168.47.1 di atas rule block, lalu nyalakan NTP server di pfSense. Kamera tetap nggak bisa ke internet, tapi jamnya sinkron.
U> Udah. Frigate di VM 121 bisa tarik stream keempat kamera, dan dari kamera nggak bisa ping 8.8.8.8.
A> Sesuai rencana. Terakhir: di app Reolink matikan UID/P2P, karena tanpa internet fitur itu cuma bikin kamera terus mencoba keluar dan mengisi log firewall.
""",
    ),
    _Scene(
        day=10,
        lang="en",
        window="e",
        ref="sahur_rota",
        topic="ramadan",
        text="""
U> Quick one. The pre-dawn meal rota my sister and I agreed on <<ref>> is falling apart: my 03:10 alarm didn't go off twice this week because the phone was on Do Not Disturb.
A> Then let the house do the waking instead of the phone. Home Assistant can play an announcement on the bedroom speaker at 03:10 on your cooking days and at 03:35 for waking your mother. Which speakers do you have?
U> A Nest Mini in my room and one in the kitchen. Kak Rina has her own in her room.
A> Make an automation per person, keyed on the weekday from the rota:
```yaml
trigger:
  - platform: time
    at: "03:10:00"
condition:
  - condition: time
    weekday: [mon, wed, fri, sun]
action:
  - service: tts.google_translate_say
    data:
      entity_id: media_player.nest_kamar_gading
      message: "Bangun, giliran kamu masak sahur"
```
A second one for your sister with `[tue, thu, sat]`, and a third at 03:35 for whoever wakes your mother.
U> Nest speakers honour Do Not Disturb too?
A> Night mode on Nest can lower the volume, but a TTS cast still plays. Set the volume explicitly with `media_player.volume_set` to 0.6 right before the message, so night mode doesn't make it a whisper.
U> Tested at 03:10 this morning with a dry run. Loud enough that I heard it from the bathroom.
A> Then the rota has a reliable alarm now. Keep the phone alarm as a backup and add a notification to both phones if the speaker is unavailable, so a Wi-Fi hiccup doesn't silently skip a morning.
""",
    ),
    _Scene(
        day=11,
        lang="id",
        window="e",
        name="thr_keponakan",
        keys=("thr_keponakan",),
        topic="budget",
        text="""
U> Malam. Tahun ini keponakan yang bakal ketemu pas lebaran ada dua belas. Aku mau siapin dari sekarang biar nggak panik di Jogja.
A> Boleh. Dibagi per kelompok umur? Biasanya yang kecil dan yang sudah SMP ke atas beda nominalnya.
U> Yang belum SMP ada delapan, masing-masing Rp50.000. Yang SMP dan SMA empat, Rp100.000.
A> Totalnya:
- 8 x Rp50.000 = Rp400.000
- 4 x Rp100.000 = Rp400.000
- Jumlah: Rp800.000
Butuh uang baru: 8 lembar Rp50.000 dan 4 lembar Rp100.000, atau kalau mau lebih fleksibel, tambah pecahan Rp20.000 untuk jaga-jaga ada keponakan yang nggak terduga.
U> Tukar uang baru di mana yang nggak antre?
A> Lewat aplikasi PINTAR dari Bank Indonesia: pilih lokasi penukaran dan jadwal, lalu datang sesuai slot dengan bukti pemesanan. Kuotanya cepat habis, jadi pesan pagi-pagi.
U> Dapat slot di kantor cabang Margonda, jam 10.00. Aku tambah 5 lembar Rp20.000 jaga-jaga.
A> Total yang ditukar jadi Rp900.000. Siapkan 12 amplop plus beberapa cadangan, tulis nama di tiap amplop dari sekarang biar di Jogja tinggal bagi.
U> Amplopnya beli yang gambar ketupat, 20 biji Rp15.000.
A> Masuk pos anggaran Lebaran: Rp900.000 uang tunai plus Rp15.000 amplop. Simpan uang barunya terpisah dari dompet harian supaya nggak kepakai duluan.
""",
    ),
    _Scene(
        day=12,
        lang="id",
        window="e",
        name="bank_dns",
        keys=("bank_dns",),
        topic="network",
        text="""
U> Malam. HP Ibu nggak bisa login aplikasi bank dari tadi sore, muncul "Koneksi terputus, coba lagi". Pakai data seluler bisa.
A> Kalau lewat data seluler lancar tapi lewat Wi-Fi rumah gagal, curiga pertama ke Pi-hole. Buka Query Log, filter client IP HP Ibu, lalu coba login sekali lagi dan lihat domain yang statusnya Blocked.
U> Ketemu: `h.online-metrix.net` diblokir, tepat waktu Ibu coba login. Masuk dari blocklist yang aku tambah minggu ini.
A> Itu domain layanan sidik jari perangkat yang dipakai banyak bank untuk cek keamanan login. Kalau diblokir, aplikasinya menganggap cek gagal lalu menolak masuk. Allowlist:
```
pihole allow h.online-metrix.net
```
Lalu suruh Ibu matikan dan nyalakan Wi-Fi biar cache DNS HP-nya bersih.
U> Udah bisa login. Kok blocklist bisa segalak itu ya?
A> Daftar yang agresif memang sengaja menyapu semua pelacak, termasuk yang dibutuhkan aplikasi keuangan. Opsi yang lebih rapi: bikin group di Pi-hole untuk HP Ibu dengan blocklist yang lebih ringan, jadi perangkatmu tetap pakai daftar ketat.
U> Bikin group `ringan` buat HP Ibu sama tablet, cuma pakai daftar StevenBlack.
A> Sip. Catat juga domain tadi di catatan homelab, karena kalau suatu hari kamu reset Pi-hole, masalah yang sama akan muncul lagi.
""",
    ),
    _Scene(
        day=13,
        lang="id",
        window="e",
        name="kolak",
        keys=("kolak",),
        topic="ramadan",
        text="""
U> Sore tadi Kak Rina bikin kolak pisang kepok campur ubi dan kolang-kaling buat buka bareng. Ibu sampai nambah dua kali.
A> Kedengarannya enak. Pakai gula aren atau gula pasir?
U> Gula aren dua keping plus sedikit garam, santannya santan kara 200 ml dicampur air. Kak Rina bilang kuncinya pandan diikat, direbus dari awal.
A> Itu memang kuncinya. Kalau mau dicatat jadi resep keluarga:
- 6 pisang kepok, potong serong
- 1 ubi ungu sedang, potong dadu
- 150 g kolang-kaling
- 2 keping gula aren, sejumput garam
- 200 ml santan, 800 ml air, 2 lembar pandan
Rebus air, gula, pandan; masukkan ubi dulu, lalu pisang dan kolang-kaling; santan paling akhir sambil diaduk pelan supaya nggak pecah.
U> Iya, simpan ya. Aku masak es buah, tapi kurang manis katanya.
A> Es buah yang kurang manis gampang diselamatkan: tambahkan sirup merah atau susu kental manis sedikit-sedikit di gelas masing-masing, bukan di panci, jadi yang suka kurang manis tetap aman.
U> Besok giliran aku bikin takjil. Kepikiran bubur sumsum.
A> Bubur sumsum cocok dan murah: tepung beras, santan, garam, dan kuah gula merah. Bikin kuahnya dulu siang hari biar sore tinggal masak buburnya.
""",
    ),
    _Scene(
        day=14,
        lang="en",
        window="a",
        agent="zed",
        name="orders_index",
        keys=("orders_index",),
        topic="work",
        text="""
U> The customer page in the admin app takes forever to show someone's order history. Fajar measured 2.3 s for customers with a lot of orders.
A> Let's look at the plan. Can you paste `EXPLAIN (ANALYZE, BUFFERS)` for the query?
U> ```
Sort  (cost=48211.62..48230.11 rows=7397 width=212) (actual time=2291.4..2298.7 rows=7312 loops=1)
  ->  Seq Scan on orders  (cost=0.00..47740.20 rows=7397 width=212) (actual time=0.03..2270.8 rows=7312 loops=1)
        Filter: (customer_id = 88121)
        Rows Removed by Filter: 2481907
```
A> A sequential scan over about 2.5 million rows to find 7,312, then a sort. The query filters on `customer_id` and orders by `created_at DESC` with `LIMIT 50`, right? Then one composite index serves both the filter and the order:
```sql
CREATE INDEX CONCURRENTLY idx_orders_customer_created
  ON orders (customer_id, created_at DESC);
```
With it, Postgres reads the first 50 matching rows in order and stops.
U> Built it on staging, took 3 minutes. Now 40 ms, and the plan is an Index Scan with no Sort node.
A> That's the expected shape. Before production, check write overhead: orders gets maybe a few inserts per second, so one more index is cheap. Build it with `CONCURRENTLY` in production too, and watch for an `INVALID` index if the build gets interrupted.
U> Deployed. Also noticed PAY-3871 complains about the same page for finance users, probably fixed by this too.
A> Likely, since it's the same query. Ask finance to confirm and close it with a link to this change, and add the index to the migration files so a fresh database gets it as well.
""",
    ),
    _Scene(
        day=15,
        lang="en",
        window="a",
        agent="zed",
        name="pay3817",
        keys=("pay3817",),
        topic="work",
        text="""
U> Working on PAY-3817 today: some customers got charged twice when the payment gateway retried its notification callback.
A> Double charges from retries usually mean the callback handler isn't idempotent. What does the handler do when it receives the notification?
U> It looks up the invoice, marks it paid, and creates a ledger entry. When the gateway doesn't get a 200 within 5 seconds, it retries, and our handler was slow because it also sends the email receipt inline.
A> So the second callback arrives while the first is still running, both see the invoice as unpaid, both write. Fix in three parts:
1. Store the gateway's transaction id in a table with a UNIQUE constraint and insert it first, in the same transaction as the ledger entry. A duplicate insert means "already processed": return 200.
2. Lock the invoice row with `SELECT ... FOR UPDATE` before checking its status.
3. Move the email to a background job so the handler answers well under 5 seconds.
U> We also have 23 affected invoices from last week.
A> Write a one-off script that finds invoices with two ledger entries for the same gateway transaction, reverse the duplicate, and produce a CSV for finance to refund. Keep it in the repo with the ticket number in the file name so the audit trail is clear.
U> All three parts are in, the reconciliation script found exactly 23. Finance has the CSV.
A> Good. Add a test that calls the handler twice concurrently with the same payload and asserts one ledger entry, then note in PAY-3817 which release contains the fix.
""",
    ),
    _Scene(
        day=17,
        lang="id",
        window="e",
        name="silaturahmi",
        keys=("silaturahmi",),
        topic="family",
        text="""
U> Malam dari Jogja. Besok lebaran, aku mau susun urutan kunjungan ke keluarga besar dua hari ini. Ada rumah Mbah di Kotagede, Pakde Harjo di Bantul, Bulik Sri di Sleman, sama Om Hadi di Gamping.
A> Kita urutkan berdasarkan adat dulu, lalu jarak. Biasanya hari pertama ke yang paling sepuh. Mbah di Kotagede jadi pertama?
U> Iya, Mbah pertama, habis salat Id langsung ke sana. Ibu maunya Pakde Harjo juga hari pertama karena kakak tertua.
A> Usulan:
**Hari 1**
1. Salat Id, lalu ke rumah Mbah di Kotagede sampai makan siang.
2. Sore ke Pakde Harjo di Bantul, sekitar 25 menit dari Kotagede.
**Hari 2**
1. Pagi ke Om Hadi di Gamping.
2. Siang ke Bulik Sri di Sleman, sekitar 30 menit dari Gamping lewat ringroad.
Ringroad di hari kedua biasanya padat setelah jam 11.00, jadi berangkat dari Gamping sebelum jam itu.
U> Mobilnya sewa di rental Pak Darto, Rp450.000 per hari pakai sopir.
A> Dua hari jadi Rp900.000, belum termasuk bensin dan makan sopir. Konfirmasi jam jemput: hari pertama jam 06.30 supaya sempat salat Id.
U> Udah konfirmasi. Kak Rina bawa oleh-oleh buat tiap rumah, roti dan sirup.
A> Lengkap. Simpan urutan ini di grup keluarga biar saudara yang lain tahu kapan kalian datang, jadi nggak ada rumah yang kosong waktu kalian sampai.
""",
    ),
    _Scene(
        day=20,
        lang="en",
        window="e",
        ref="mudik_ticket",
        topic="family",
        text="""
U> Back in Depok last night. Quick reflection on the homecoming trip before I forget: booking the train seats on <<ref>> was the stressful part, but it paid off. Ibu slept most of the ride there.
A> Welcome back. Anything you'd do differently next year?
U> Book the return at the same time. We ended up on a later train back with seats in two different cars, because return tickets were gone by the time Kak Rina's leave was confirmed.
A> Worth writing down now while it stings. A note for next year: buy both directions on the first day, and if leave is uncertain, buy a refundable return anyway; the cancellation fee is smaller than the stress.
U> Also, the homelab survived a week without me. Only thing: one nightly backup failed on the third night.
A> Do you know which job and why?
U> The Nextcloud VM, lock timeout, because the scrub was still running when the backup started.
A> Then move one of them. Scrubs are monthly, so shifting the backup job an hour later on the second Sunday, or the scrub to a different night, avoids the overlap. Everything else green?
U> Everything else green. Uptime Kuma says 99.7% for the week, the 0.3% was the ISP at night.
A> A quiet week away is the best test a homelab can pass. Unpack first, then fix the schedule tomorrow.
""",
    ),
    _Scene(
        day=21,
        lang="en",
        window="e",
        name="nic_hang",
        keys=("nic_hang",),
        topic="proxmox",
        text="""
U> pve-01 dropped off the network twice today for about ten seconds. dmesg shows this:
```
e1000e 0000:00:1f.6 eno1: Detected Hardware Unit Hang:
  TDH                  <5a>
  TDT                  <7e>
  next_to_use          <7e>
  next_to_clean        <58>
e1000e 0000:00:1f.6 eno1: Reset adapter unexpectedly
```
A> That's the classic Intel I219 issue with the e1000e driver: the NIC's segmentation offload hangs under certain traffic, the driver resets the adapter, and you lose the link for a few seconds. It happens more with heavy transfers, such as backups.
U> The drops were exactly during the vzdump window and while Immich was importing.
A> Matches. The usual fix is to turn off TCP and generic segmentation offload on that interface:
```
ethtool -K eno1 tso off gso off
```
Test it live first. If the hangs stop, make it permanent in `/etc/network/interfaces` under the `iface eno1` stanza:
```
post-up /usr/sbin/ethtool -K eno1 tso off gso off
```
U> Does it cost performance?
A> A little CPU during large transfers, which a modern CPU won't notice at gigabit speed. Throughput stays the same.
U> Ran a 40 GB copy and a backup together, no hang in dmesg. Added the post-up line and rebooted, `ethtool -k eno1` shows both off.
A> Good. Keep an eye on `journalctl -k | grep -i hang` for a week. If it ever comes back, the next step is a USB or PCIe NIC with a different chipset for the bridge.
""",
    ),
    _Scene(
        day=23,
        lang="en",
        window="e",
        name="subnet_router",
        keys=("subnet_router",),
        topic="network",
        text="""
U> I want to reach everything at home from my laptop when I'm out, including things that can't run a client, like the printer and the pfSense web UI.
A> Run one node as a subnet router: it announces the home network to the rest of your tailnet, and traffic to those addresses goes through it. A small LXC on pve-01 is enough. What's the home subnet?
U> 192.168.10.0/24 for the main LAN.
A> In the LXC:
```
echo 'net.ipv4.ip_forward = 1' > /etc/sysctl.d/99-tailscale.conf
sysctl -p /etc/sysctl.d/99-tailscale.conf
tailscale up --advertise-routes=192.168.10.0/24
```
Then approve the route in the admin console under the machine's "Edit route settings". Unprivileged LXCs also need `/dev/net/tun` passed through in the container config.
U> Approved. My laptop still can't reach 192.168.10.1 from my phone's hotspot.
A> On Linux clients routes aren't accepted by default. Run `tailscale up --accept-routes` on the laptop. macOS, Windows, iOS and Android accept them automatically.
U> That was it. pfSense UI opens, the printer's page too. Ping is about 35 ms from the hotspot.
A> Good. Two follow-ups: disable key expiry for the router LXC so it doesn't drop off in six months, and add an ACL so only your devices can use the route, not every shared node.
""",
    ),
    _Scene(
        day=25,
        lang="id",
        window="e",
        ref="ups_battery",
        topic="proxmox",
        text="""
U> Lanjutan dari obrolan <<ref>> soal aki UPS yang aku ganti. Sekarang UPS bunyi terus tiap tengah malam, dan NUT kirim notifikasi "on battery" dua-tiga kali semalam, masing-masing cuma beberapa detik.
A> Kalau akinya masih baru dan self-test lulus, pindah ke baterai sebentar-sebentar itu biasanya karena tegangan PLN turun naik di malam hari, dan sensitivitas UPS-nya tinggi. Di `upsc`, berapa `input.voltage` waktu kejadian?
U> Aku pasang logging: turun sampai 188 V sekitar jam 00.10, normalnya 221 V.
A> 188 V itu di bawah batas transfer bawaan seri itu, jadi UPS memang pindah ke baterai, dan itu perilaku yang benar. Dua pilihan:
1. Turunkan sensitivitas lewat tombol di panel atau lewat apcupsd/NUT kalau modelnya mendukung, supaya toleransi tegangannya lebih lebar.
2. Biarkan, karena memang itu tugasnya; yang perlu dijaga cuma supaya notifikasinya nggak mengganggu.
U> Aku pilih yang kedua, cuma notifikasinya bikin bangun.
A> Atur `upsmon` supaya notifikasi ONBATT baru dikirim kalau berlangsung lebih dari 30 detik, pakai `upssched`:
```
AT ONBATT * START-TIMER onbatt 30
AT ONLINE * CANCEL-TIMER onbatt
```
Kedipan beberapa detik nggak akan bangunin kamu lagi, tapi pemadaman betulan tetap dilaporkan.
U> Udah aku pasang. Log semalam ada tiga kejadian kayak gitu, jadi malam ini langsung ketahuan hasilnya.
A> Dengan timer 30 detik, tiga kejadian semalam nggak akan bikin notifikasi sama sekali. Kalau tegangan drop-nya makin sering, laporkan ke PLN dengan data log tadi; 188 V itu sudah di luar toleransi yang wajar.
""",
    ),
    _Scene(
        day=26,
        lang="id",
        window="e",
        name="rsync_reversed",
        keys=("rsync_reversed",),
        topic="nas",
        text="""
U> Aduh. Aku barusan jalanin rsync buat sinkron folder foto ke HDD eksternal, tapi kebalik. Perintahnya:
```
rsync -a --delete /media/hdd-cadangan/foto/ /mnt/tank/foto/
```
Sumber sama tujuannya ketuker. Semua foto yang belum ada di HDD eksternal hilang dari NAS.
A> Tenang dulu, dan jangan tulis apa-apa lagi ke dataset itu. Apakah `tank/foto` punya snapshot periodik?
U> Ada, snapshot harian jam 03.00.
A> Bagus. Lihat dulu apa yang hilang dibanding snapshot tadi pagi:
```
zfs list -t snapshot -o name,creation tank/foto | tail -3
zfs diff tank/foto@<snapshot-terakhir> tank/foto | grep '^-' | wc -l
```
Kalau sejak jam 03.00 nggak ada foto baru yang ditambahkan, paling bersih rollback: `zfs rollback tank/foto@<snapshot-terakhir>`. Kalau ada foto baru setelah jam 03.00, salin balik dari direktori `.zfs/snapshot/` saja.
U> Yang hilang 3.214 file. Siang tadi ada upload dari HP ke Immich, jadi aku salin balik dari `.zfs/snapshot` aja.
A> Pilihan yang tepat. Pakai rsync lagi, kali ini tanpa `--delete` dan dengan `--dry-run` dulu:
```
rsync -a --dry-run /mnt/tank/foto/.zfs/snapshot/<snapshot>/ /mnt/tank/foto/
```
Kalau daftarnya masuk akal, jalankan tanpa `--dry-run`.
U> Udah balik semua, jumlah file sama dengan kemarin ditambah upload tadi siang. Jantungku masih deg-degan.
A> Wajar. Pelajaran yang bisa dipasang permanen: bikin skrip kecil dengan sumber dan tujuan yang ditulis mati di dalamnya, selalu `--dry-run` dulu, dan jangan ketik perintah `--delete` dengan tangan lagi.
""",
    ),
)

_SCENES += (
    _Scene(
        day=28,
        lang="id",
        window="e",
        name="pending_sector",
        keys=("pending_sector",),
        topic="nas",
        text="""
U> Malam. TrueNAS kirim email alert soal disk `sdb` di nas-utama. Hasil `smartctl -A /dev/sdb`:
```
  5 Reallocated_Sector_Ct   0x0033   100   100   005    Pre-fail  Always       -       0
197 Current_Pending_Sector  0x0012   100   100   000    Old_age   Always       -       8
198 Offline_Uncorrectable   0x0010   100   100   000    Old_age   Offline      -       8
199 UDMA_CRC_Error_Count    0x003e   200   200   000    Old_age   Always       -       0
```
A> Current_Pending_Sector 8 dan Offline_Uncorrectable 8 artinya ada delapan sektor yang gagal dibaca dan belum dipindahkan. CRC 0, jadi bukan kabel. Ini disk yang mulai rusak di permukaannya. Umurnya berapa lama?
U> WD Red Plus 4TB, Power_On_Hours 31.200, jadi sekitar tiga setengah tahun. Masih garansi nggak ya?
A> WD Red Plus garansinya tiga tahun, jadi kemungkinan sudah lewat. Cek nomor serinya di situs WD untuk memastikan. Apa pun hasilnya, rencanakan penggantian sekarang, selagi mirror-nya masih utuh.
U> Beli yang baru hari ini, datang lusa. Sambil nunggu, aman nggak pool-nya?
A> Masih aman selama disk pasangannya sehat. Yang bisa dilakukan sambil menunggu:
1. Jalankan scrub sekarang; ZFS akan membaca ulang blok itu dan menulis ulang dari sisi mirror yang bagus, kadang pending sector jadi turun ke 0 karena sektor itu ditulis ulang.
2. Jangan jalankan pekerjaan berat seperti impor foto besar.
3. Pastikan backup ke syno-ds220 semalam sukses.
U> Scrub selesai, repaired 512K, pending tinggal 2. Tetap ganti kan?
A> Tetap ganti. Pending yang muncul sekali biasanya akan muncul lagi. Nanti prosesnya: `zpool offline tank <disk-lama>`, pasang disk baru, lalu `zpool replace tank <disk-lama> <disk-baru>` dan tunggu resilver selesai sebelum melakukan hal lain.
""",
    ),
    _Scene(
        day=30,
        lang="en",
        window="a",
        agent="zed",
        name="drop_prisma",
        keys=("drop_prisma",),
        topic="work",
        text="""
U> Tech sync with Mas Yoga just ended. Decision: we're ripping Prisma out of the invoicing app and going to plain SQL with postgres.js.
A> That's a big move. What pushed it over the line?
U> Cold starts of 1.8 s on our serverless runner, mostly loading the generated client, which is 14 MB. And two queries we couldn't express without raw SQL anyway: the aging report and the partial refunds.
A> Reasonable reasons. A few things to agree on before anyone starts:
1. Migrations: Prisma Migrate goes away too, so pick a tool. dbmate is simple and language-agnostic.
2. Types: write a thin typed layer per table, or generate types from the database with a tool like kanel so they don't drift.
3. Order of work: port read paths first, then writes, one module at a time behind the same interface.
U> We picked dbmate and kanel. 23 queries to port. Fajar owns the read path, I do writes and transactions. Deadline end of the month.
A> Then the risky part is yours: transactions. postgres.js uses `sql.begin(async sql => ...)`, and everything inside must use that `sql`, not the outer one, otherwise the statement runs outside the transaction. Put that in the PR template as a checklist item.
U> Good catch. Also, PAY-3718 was blocked on Prisma not supporting the lock we need, that one gets unblocked by this.
A> Nice side effect. Write the decision down as a short ADR in the repo: context, the cold start numbers, alternatives considered, and that the team agreed. In three months someone will ask why.
U> ADR-0012 drafted, Yoga approved it.
A> Then you're set. Start with one write path end to end, including the transaction helper and tests, so Fajar can copy the pattern for reads.
""",
    ),
    _Scene(
        day=31,
        lang="en",
        window="e",
        name="wg_mtu",
        keys=("wg_mtu",),
        topic="network",
        text="""
U> Weird one. From the office, my WireGuard tunnel home connects, small pages load, SSH works, but uploading anything big to Nextcloud stalls at 0% forever.
A> Small packets fine, big transfers stuck: that's the classic signature of an MTU problem. Large packets get dropped somewhere on the path and the ICMP message that would tell the sender to shrink them gets lost too. What's your MTU on wg0?
U> Default, 1420. Home is on PPPoE from the ISP.
A> PPPoE already takes 8 bytes, leaving 1492, and the office network might have its own overhead. Test it: from the laptop, ping the home server over the tunnel with the don't-fragment flag and shrink the size until it passes:
```
ping -M do -s 1352 10.8.0.1
```
Increase or decrease until you find the largest size that works; add 28 for IP and ICMP headers.
U> 1352 passes, 1353 fails. So 1380.
A> Then set `MTU = 1380` in the [Interface] section of the laptop's config, and on the server's side too for symmetry. Restart the tunnel.
U> Uploaded a 2 GB video, steady 9 MB/s, which is about my home upload.
A> That's the fix. If the office network changes, you can rerun the same test; and if you ever add your phone, give it the same MTU since mobile networks often have even less room.
""",
    ),
    _Scene(
        day=32,
        lang="id",
        window="e",
        name="b2_cost",
        keys=("b2_cost",),
        topic="nas",
        text="""
U> Malam. Aku mau cadangan foto keluarga juga ada di luar rumah. Pilihannya Hyper Backup dari syno-ds220 ke Backblaze B2. Foto sekarang 640 GB.
A> B2 cocok buat itu. Tarifnya sekitar 6 dolar per TB per bulan, dihitung per GB. Untuk 640 GB: 0,64 x 6 = sekitar 3,84 dolar, kurang lebih Rp62.000 per bulan dengan kurs Rp16.200. Unduh untuk restore gratis sampai tiga kali data yang tersimpan per bulan.
U> Pertumbuhannya sekitar 15 GB per bulan dari HP aku, Kak Rina, sama Ibu.
A> Setahun tambah sekitar 180 GB, jadi akhir tahun depan sekitar 820 GB, masih di bawah Rp80.000 per bulan. Versi lama juga makan tempat, jadi atur rotasi di Hyper Backup: Smart Recycle dengan maksimal 30 versi sudah cukup untuk foto yang jarang berubah.
U> Enkripsi client-side perlu?
A> Perlu, karena ini foto keluarga yang keluar rumah. Aktifkan enkripsi di Hyper Backup waktu bikin task; simpan kunci pemulihannya di dua tempat, misalnya di pengelola kata sandi dan di kertas di lemari. Tanpa kunci itu, backup-nya tidak bisa dibuka siapa pun, termasuk kamu.
U> Task dibuat, jadwal tiap malam jam 01.30, upload awal kira-kira dua hari dengan upload 20 Mbps.
A> Hitungannya pas: 640 GB di 20 Mbps sekitar 71 jam kalau penuh, jadi mungkin tiga hari. Batasi kecepatan upload di jam 18.00 sampai 23.00 supaya internet rumah nggak lemot waktu semua orang di rumah.
""",
    ),
    _Scene(
        day=34,
        lang="id",
        window="a",
        name="modem_reset_1",
        keys=("modem_bridge",),
        topic="network",
        text="""
U> Siang. Teknisi ISP tadi datang ganti ONT karena kabel optiknya bermasalah. Setelah dia pergi, pfSense nggak dapat internet sama sekali.
A> ONT baru biasanya datang dengan setelan pabrik: mode router dengan PPPoE di dalam modem sendiri, bukan bridge. pfSense-mu sebelumnya yang dial PPPoE kan?
U> Iya, pfSense yang dial PPPoE. Modemnya ZTE F670L.
A> Berarti ONT harus dikembalikan ke bridge:
1. Login ke 192.168.1.1 dari laptop yang dicolok langsung ke ONT.
2. Di WAN, hapus koneksi INTERNET mode Route, bikin baru mode Bridge dengan VLAN ID yang sama dari ISP, port binding ke LAN1.
3. Colok LAN1 ke port WAN pfSense.
4. Di pfSense, Status > Interfaces, klik Connect di WAN.
U> Login admin-nya nggak bisa pakai akun lama, mungkin beda.
A> ONT yang baru dipasang sering masih pakai akun bawaan teknisi. Minta ke call center ISP untuk akses admin, atau tanya teknisinya lewat WhatsApp selagi masih dekat. Jangan reset paksa, nanti konfigurasi VoIP dan IPTV dari ISP ikut hilang.
U> Dapat dari teknisinya. Udah bridge, pfSense dapat IP publik lagi.
A> Bagus. Simpan langkah tadi dan foto layar setelan WAN di catatan homelab, karena setiap kali ONT diganti atau di-reset, langkah yang sama harus diulang.
""",
    ),
    _Scene(
        day=35,
        lang="en",
        window="e",
        name="iron_low",
        keys=("iron_low",),
        topic="run",
        text="""
U> Saw the GP today about feeling wiped out on every run for three weeks. He ordered blood work this morning and called back this afternoon.
A> What did the results show?
U> Hemoglobin 12.9, ferritin 18 ng/mL. He said the ferritin is what explains the fatigue, even though the hemoglobin is only slightly off.
A> A ferritin of 18 means your stores are nearly empty, which is common in people who run a lot, and it makes easy paces feel hard long before anemia shows up. What did he prescribe?
U> Ferrous sulfate once a day, taken with orange juice, not with tea or coffee within two hours, and no supplements with dairy. Recheck in four weeks.
A> That matches standard advice. A few practical tips:
- Take it in the morning on an empty stomach if your stomach tolerates it, otherwise with a light meal.
- Constipation and dark stools are normal side effects.
- Keep runs easy for now; intensity can come back once the numbers improve.
U> He also said to stop the two cups of teh manis with lunch.
A> That's a big one: tea tannins block absorption. Move the tea to mid-afternoon, at least two hours from the pill and from meals. I can remind you about the recheck in four weeks if you want.
U> Yes please. And I'll cut long runs to 90 minutes until then.
A> Sensible. Log how runs feel on a 1 to 10 scale so you can compare once the stores refill.
""",
    ),
    _Scene(
        day=37,
        lang="en",
        window="e",
        name="exit137",
        keys=("exit137",),
        topic="docker",
        text="""
U> Immich smart search stopped working. `docker ps -a` shows `immich_machine_learning` as `Exited (137) 3 minutes ago`.
A> Exit code 137 means the process got SIGKILL, and inside Docker that's almost always the out-of-memory killer. Does the compose file set a memory limit for that container?
U> Yes, `mem_limit: 2g`. I set it last month so it wouldn't eat the whole VM.
A> The machine learning container loads the CLIP model for smart search and the face recognition model; with a larger CLIP model, 2 GB isn't enough, especially during the initial indexing of a big library. Confirm with `dmesg -T | grep -i oom` on the Docker host.
U> Confirmed: `Memory cgroup out of memory: Killed process 23118 (python)`.
A> Then either raise the limit to 4g, or switch to a smaller CLIP model in Administration > Machine Learning, or both. The VM has how much RAM?
U> 12 GB. Raised it to 4g and set `MACHINE_LEARNING_MODEL_TTL=300` so the models unload when idle.
A> Good combination. Rerun the smart search job for missing assets only, and watch `docker stats` during it; peak should stay under 4 GB now.
U> Job is halfway through, peak so far 3.1 GB, no exit code 137 since the change.
A> Fixed. Leave the limit in place, it's still useful, just sized for the real peak.
""",
    ),
    _Scene(
        day=38,
        lang="en",
        window="e",
        agent="zed",
        name="bank_script",
        keys=("bank_script",),
        topic="budget",
        text="""
U> I'm tired of sorting my spending by hand every month. I can export my BCA account and card history as CSV. Can we write something that labels each line?
A> Sure. Rules by merchant keyword are enough for most lines: a small table of patterns to categories, first match wins, everything else goes to "uncategorized" for you to label by hand. What do the descriptions look like?
U> Like `TRSF E-BANKING DB 0412/FTSCY/WS95031 GOPAY TOPUP`, `KARTU DEBIT INDOMARET MARGONDA`, `QRIS KOPI KENANGAN DEPOK`, `KRL COMMUTER LINE`.
A> Then something like:
```python
import csv, re
from collections import defaultdict
from decimal import Decimal

RULES = [
    (r"GOPAY|OVO|SHOPEEPAY", "e-wallet"),
    (r"INDOMARET|ALFAMART|SUPERINDO", "groceries"),
    (r"KOPI|COFFEE|STARBUCKS", "coffee"),
    (r"KRL|COMMUTER|TRANSJAKARTA|GOJEK|GRAB", "transport"),
    (r"PLN|TELKOM|INDIHOME|BIZNET", "utilities"),
]

def label(desc: str) -> str:
    for pattern, cat in RULES:
        if re.search(pattern, desc, re.I):
            return cat
    return "uncategorized"

totals = defaultdict(Decimal)
with open("mutasi.csv", newline="", encoding="cp1252") as f:
    for row in csv.DictReader(f):
        totals[label(row["Keterangan"])] += Decimal(row["Jumlah"].replace(",", ""))
```
U> Ran it on last month: 214 lines, 31 uncategorized. Most of those are transfers to Kak Rina and Ibu.
A> Add a rule for transfers by account name, and a separate "household" category for the monthly contribution to Ibu, so it doesn't look like random spending. Print the uncategorized lines at the end so you can grow the rules each month.
U> Down to 9 uncategorized. Coffee is Rp612k, more than I thought.
A> That's the useful part: the numbers now come for free. Run it on the first of each month and keep the rules file in git next to the script.
""",
    ),
    _Scene(
        day=40,
        lang="id",
        window="e",
        name="zigbee_dongle",
        keys=("zigbee_dongle",),
        topic="docker",
        text="""
U> Malam. Dongle Zigbee lama, CC2531, makin sering putus. Sensor pintu belakang hilang-muncul. Aku udah beli Sonoff ZBDongle-E.
A> Upgrade yang masuk akal. ZBDongle-E pakai chip EFR32MG21, di Zigbee2MQTT adapternya `ember`. Karena chip-nya beda keluarga, jaringan lama nggak bisa dipindah; semua perangkat harus di-pairing ulang.
U> Ada 14 perangkat: 6 sensor pintu/jendela Aqara, 4 sensor suhu Sonoff SNZB-02, 2 tombol, dan 2 smart plug yang jadi router.
A> Urutan yang memudahkan:
1. Backup folder data Zigbee2MQTT dulu.
2. Ganti `serial` di configuration.yaml:
```yaml
serial:
  port: /dev/serial/by-id/usb-ITead_Sonoff_Zigbee_3.0_USB_Dongle_Plus_V2-if00-port0
  adapter: ember
```
3. Hapus `coordinator_backup.json` dan `database.db` lama.
4. Pairing smart plug dulu, karena mereka jadi router yang memperkuat jaringan, baru sensor yang paling jauh.
U> Channel-nya tetap 11?
A> Cek channel Wi-Fi di rumah dulu. Kalau AP di channel 1 atau 6, Zigbee channel 25 biasanya paling jauh dari gangguan. Karena semua di-pairing ulang, ini saat yang pas untuk pindah channel.
U> Wi-Fi di channel 6, jadi aku pakai 25. Semua 14 udah masuk, nama entity aku samakan dengan yang lama biar automation nggak rusak.
A> Itu langkah terpenting. Colokkan dongle pakai kabel USB extension, jauh dari port USB 3 dan SSD, biar interferensinya kecil. Sensor pintu belakang sekarang harusnya stabil karena smart plug dapur jadi router di dekatnya.
""",
    ),
    _Scene(
        day=41,
        lang="en",
        window="e",
        name="smb_acl",
        keys=("smb_acl",),
        topic="nas",
        text="""
U> Kak Rina's Windows laptop can open the Foto share on nas-utama but can't save anything: "You need permission to perform this action".
A> Reading works but writing doesn't, so authentication is fine and the problem is permissions. On TrueNAS, check two layers: the share ACL and the dataset ACL. Which user does her laptop connect as?
U> She connects as `rina`. The dataset is owned by `gading`, group `gading`.
A> That's it: the dataset ACL only gives write access to your user. Make a group for the family and give it write access:
1. Credentials > Groups: create `keluarga`, add `gading`, `rina` and `ibu`.
2. Datasets > tank/foto > Edit ACL: add an entry for group `keluarga` with Modify, apply recursively.
3. Keep the share ACL at "Everyone: Full control" and let the dataset ACL decide.
U> Applied recursively to 212,000 files, took a few minutes.
A> Expected. Have her disconnect the drive and reconnect so Windows gets a fresh session with the new group membership; Windows caches the old token otherwise.
U> She can save now. Wrote a test file and deleted it.
A> Good. For new files to inherit the right permissions, make sure the ACL entry has inheritance flags set; TrueNAS does that by default for the preset, so new folders she creates should work too.
""",
    ),
    _Scene(
        day=43,
        lang="en",
        window="a",
        agent="zed",
        name="pg16_upgrade",
        keys=("pg16_upgrade",),
        topic="work",
        text="""
U> Time to move pg-main from Postgres 15 to 16. It runs in Docker with the data in a named volume, 38 GB.
A> Two routes: dump and restore, which is simple but slow for 38 GB, or `pg_upgrade --link`, which is fast because it hard-links data files instead of copying them. With Docker, the community image `tianon/postgres-upgrade:15-to-16` bundles both versions.
U> Let's do pg_upgrade. Downtime is fine tonight.
A> Plan:
1. Stop the app containers, then `docker compose stop postgres`.
2. Snapshot the VM or the volume first; `--link` means the old cluster is unusable once the new one starts.
3. Create a new empty volume for 16 and run:
```
docker run --rm \\
  -v pgdata15:/var/lib/postgresql/15/data \\
  -v pgdata16:/var/lib/postgresql/16/data \\
  tianon/postgres-upgrade:15-to-16 --link
```
4. Point compose at `postgres:16` with the new volume and start it.
5. Copy over `pg_hba.conf` changes, since pg_upgrade doesn't carry them.
U> Both volumes have to be on the same filesystem for the hard links, right?
A> Yes, otherwise it fails with a cross-device link error. Mount a parent directory that contains both, or fall back to copy mode.
U> Done: 4 minutes for 38 GB. App is up. Queries feel slower though.
A> Statistics don't carry over, so the planner is guessing. Run `vacuumdb --all --analyze-in-stages` and it'll improve within minutes. After a few days of normal operation, delete the old volume.
U> After analyze everything is back to normal speed. `SELECT version()` says 16.4.
A> Done. Note the date and the image version in your homelab notes, and update the backup job so it dumps with the 16 client.
""",
    ),
    _Scene(
        day=44,
        lang="id",
        window="a",
        agent="zed",
        ref="drop_prisma",
        topic="work",
        text="""
U> Lanjut migrasi sesuai keputusan <<ref>>: ninggalin ORM di service billing. Sisa 9 query. Yang paling susah query laporan aging piutang.
A> Laporan aging biasanya paling gampang ditulis pakai CTE dan `CASE` per ember umur. Strukturnya bagaimana di versi lama?
U> Piutang dikelompokkan per pelanggan: 0-30 hari, 31-60, 61-90, dan di atas 90, dari tanggal jatuh tempo invoice yang belum lunas.
A> Versi SQL-nya:
```sql
WITH terbuka AS (
  SELECT customer_id, amount - paid_amount AS sisa,
         current_date - due_date AS umur
  FROM invoices
  WHERE status <> 'paid'
)
SELECT customer_id,
  sum(sisa) FILTER (WHERE umur <= 30)               AS "0_30",
  sum(sisa) FILTER (WHERE umur BETWEEN 31 AND 60)   AS "31_60",
  sum(sisa) FILTER (WHERE umur BETWEEN 61 AND 90)   AS "61_90",
  sum(sisa) FILTER (WHERE umur > 90)                AS "90_plus"
FROM terbuka
GROUP BY customer_id;
```
`FILTER` lebih bersih daripada `CASE` di dalam `sum`.
U> Angkanya beda Rp1,2 juta dari versi lama buat satu pelanggan.
A> Biasanya karena zona waktu: `current_date` di server UTC, sedangkan versi lama menghitung umur di Asia/Jakarta, jadi invoice yang jatuh tempo tepat di batas hari masuk ember berbeda. Pakai `(now() AT TIME ZONE 'Asia/Jakarta')::date` sebagai pengganti `current_date`.
U> Cocok sekarang, sampai ke rupiahnya. Sisa 8 query.
A> Mantap. Tambahkan test yang membandingkan hasil laporan lama dan baru untuk beberapa pelanggan contoh, lalu hapus kode lamanya setelah rilis.
""",
    ),
    _Scene(
        day=46,
        lang="id",
        window="e",
        name="nas_gudang",
        keys=("nas_gudang",),
        topic="nas",
        text="""
U> Malam. Om Hadi ngizinin aku naruh NAS kecil di gudang tokonya di Bogor buat cadangan kedua di luar rumah. Aku pakai Synology DS118 bekas plus WD Red Plus 8TB, hostname-nya nas-gudang.
A> Ide bagus: cadangan di lokasi lain yang kamu kendalikan sendiri, melengkapi B2. Internet di gudang pakai apa, dan bisa port forwarding?
U> Pakai modem ISP biasa, nggak ada IP publik. Jadi aku mau lewat Tailscale.
A> Cocok. Di DS118 pasang paket Tailscale dari Package Center, login, dan aktifkan "Disable key expiry" di admin console supaya nas-gudang nggak putus setelah enam bulan. Lalu dari syno-ds220 di rumah, Hyper Backup ke tujuan "Remote NAS device" dengan alamat Tailscale nas-gudang.
U> Upload awal 640 GB lewat internet gudang yang cuma 10 Mbps upload... eh, itu download dari sisi gudang, berarti upload rumahku.
A> Betul, yang membatasi upload rumahmu. Lebih cepat lagi: lakukan backup awal selagi DS118 masih di rumah lewat LAN, baru diantar ke gudang; setelah itu cuma perubahan harian yang lewat internet.
U> Oke, aku seed di rumah dulu. Soal listrik di gudang sering padam?
A> Kalau sering padam, aktifkan "Restart automatically when power supply issue is fixed" di Hardware & Power, dan jadwalkan backup di jam toko buka supaya listrik lebih mungkin menyala. Pasang notifikasi Hyper Backup ke email atau ntfy, supaya kamu tahu kalau nas-gudang berhari-hari nggak terjangkau.
U> Oke, malam ini aku seed dulu lewat LAN, perkiraan 3 jam. Besok aku antar ke Bogor.
A> Setelah terpasang di sana, tes restore satu folder kecil dari nas-gudang, supaya yakin cadangannya bisa dibuka, bukan cuma tersimpan.
""",
    ),
    _Scene(
        day=47,
        lang="id",
        window="e",
        name="sanoid",
        keys=("sanoid",),
        topic="nas",
        text="""
U> Malam. Kemarin aku nggak sengaja nimpa file spreadsheet anggaran di `tank/dokumen`, dan snapshot harian baru ada jam 03.00. Kerjaan sepanjang sore hilang.
A> Untuk dokumen yang sering diedit, snapshot harian terlalu jarang. Pasang sanoid di host yang pegang pool: snapshot tiap jam, disimpan sehari penuh, lalu harian dan bulanan lebih lama.
U> Oke. Konfigurasi yang masuk akal?
A> `/etc/sanoid/sanoid.conf`:
```
[tank/dokumen]
  use_template = dokumen

[template_dokumen]
  hourly = 24
  daily = 30
  monthly = 6
  autosnap = yes
  autoprune = yes
```
Timer `sanoid.timer` jalan tiap 15 menit dan membuat snapshot per jam sesuai template.
U> Snapshot per jam nggak bikin pool penuh?
A> Snapshot cuma menyimpan blok yang berubah. Untuk folder dokumen yang isinya spreadsheet dan PDF, 24 snapshot per jam biasanya cuma beberapa ratus MB. Cek setelah seminggu dengan `zfs list -t snapshot -o name,used tank/dokumen`.
U> Udah jalan, snapshot pertama `autosnap_..._hourly` udah muncul. Terus mau aku kirim juga ke pve-03.
A> Pakai syncoid dari cron, misalnya tiap jam lewat 20 menit:
```
syncoid --no-sync-snap tank/dokumen root@pve-03.lan:cadangan/dokumen
```
Jadi kalau pool utama bermasalah, salinan per jamnya ada di mesin lain.
""",
    ),
    _Scene(
        day=48,
        lang="en",
        window="e",
        name="washer_notify",
        keys=("washer_notify",),
        topic="docker",
        text="""
U> The washing machine is in the back and nobody hears it finish, so clothes sit wet for hours. I put a Tapo P110 with power monitoring on it.
A> Then Home Assistant can tell when a cycle ends from the power draw. Watch the power graph for one full cycle first. What does it look like?
U> Around 150 to 400 W while washing, spikes to 2,000 W when heating, and at the end it drops to about 1.5 W.
A> Use a threshold with a delay, because it also pauses briefly during the cycle:
```yaml
alias: Cucian selesai
trigger:
  - platform: numeric_state
    entity_id: sensor.mesin_cuci_power
    below: 3
    for: "00:03:00"
condition:
  - condition: template
    value_template: "{{ states('input_boolean.mesin_cuci_jalan') == 'on' }}"
action:
  - service: notify.mobile_app_hp_gading
    data:
      message: "Cucian selesai, jangan lupa dijemur"
  - service: input_boolean.turn_off
    target:
      entity_id: input_boolean.mesin_cuci_jalan
```
A second automation turns `input_boolean.mesin_cuci_jalan` on when power goes above 100 W for a minute, so a plug idling at 1.5 W doesn't keep notifying.
U> Can it notify Kak Rina and Ibu too?
A> Make a notify group with the three phones and use it in the action. For Ibu, a TTS message on the kitchen speaker may work better than a phone notification.
U> Tested with a quick cycle: notification came 3 minutes after it stopped, on all three phones.
A> Working as intended. If it ever notifies mid-cycle, increase the `for` to 5 minutes.
""",
    ),
    _Scene(
        day=50,
        lang="en",
        window="e",
        name="pbs_prune",
        keys=("pbs_prune",),
        topic="proxmox",
        text="""
U> Proxmox Backup Server is finally up: a VM on pve-03 with the 4TB WD Red passed through as the datastore `pbs-wdred`. What should I keep?
A> With deduplication, keeping many restore points is cheap. A common starting point for a homelab:
- keep-last 3
- keep-daily 7
- keep-weekly 4
- keep-monthly 6
That's roughly six months of history with dense recent points.
U> Where do I set it: in the Proxmox VE backup job or on PBS?
A> On PBS, as a prune job on the datastore: Datastore > pbs-wdred > Prune & GC. Leave the PVE job's own pruning empty so there's one place that decides. Then schedule garbage collection after the prune, since prune only removes index references and GC frees the chunks.
U> Prune daily at 02:30, GC Sunday 03:00. Verify job?
A> Yes: a weekly verify job that re-reads chunks and checks their checksums, with "skip verified" and re-verify after 30 days. Verification is what tells you a backup can actually be restored.
U> All set. The first backup of 9 VMs is running now, PBS estimates about 45 minutes.
A> Good start. Check the deduplication factor after a week: it will climb as daily backups accumulate, since most blocks don't change between days. Check the datastore usage in a month to see how fast it grows.
""",
    ),
    _Scene(
        day=51,
        lang="en",
        window="e",
        name="second_dns",
        keys=("second_dns",),
        topic="network",
        text="""
U> Every time I reboot pve-01, the whole house loses internet for a few minutes because Pi-hole lives there. Kak Rina notices immediately.
A> Then run a second Pi-hole on another node and hand out both addresses over DHCP. Clients fail over when one doesn't answer. pve-03 is the obvious place.
U> An LXC on pve-03, 192.168.10.3. The first one is 192.168.10.2. How do I keep lists and allowlists in sync?
A> nebula-sync works with Pi-hole v6: it copies configuration, lists and local DNS records from a primary to replicas on a schedule. Run it as a small container with the primary's and replica's addresses, full sync every hour.
U> Do clients really use the second one, or only when the first is dead?
A> Depends on the OS. Many clients query both and take the faster answer, so queries split between them, which is fine. What matters is that both give the same answers, which the sync takes care of.
U> Set pfSense DHCP DNS servers to .2 and .3. Rebooted pve-01 as a test: Kak Rina's video kept playing.
A> That's the real test passed. Also point pfSense's own DNS at both, and add both to Uptime Kuma so you notice when one is down instead of silently running on one leg.
""",
    ),
    _Scene(
        day=52,
        lang="id",
        window="e",
        name="pve02",
        keys=("pve02",),
        topic="proxmox",
        text="""
U> Malam. Mini PC baru Beelink EQ12 udah terpasang Proxmox 8.4 dengan hostname pve-02.lan. Mau aku gabungin ke cluster yang sudah ada.
A> Sebelum join, pastikan:
1. pve-02.lan belum punya VM atau container, karena node yang join harus kosong.
2. Jam sinkron (chrony jalan).
3. Versi Proxmox sama dengan node lain.
4. Semua node bisa resolve nama satu sama lain, isi `/etc/hosts` kalau DNS belum ada.
Lalu di pve-02.lan: `pvecm add 192.168.10.11` (IP node pertama).
U> Dmesg penuh `r8169 0000:01:00.0 enp1s0: rtl_chipcmd_cond == 1 (loop: 100, delay: 100)` waktu transfer besar.
A> NIC Realtek di mini PC murah sering begitu dengan driver r8169. Coba dulu matikan ASPM: tambahkan `pcie_aspm=off` di `/etc/kernel/cmdline` lalu `proxmox-boot-tool refresh` dan reboot. Kalau masih, pasang driver r8168 dari paket `r8168-dkms`.
U> Pakai `pcie_aspm=off` udah bersih, iperf3 stabil 940 Mbps.
A> Bagus. Sekarang join cluster. Setelah join, cek `pvecm status`: harus ada 3 node dan "Quorate: Yes".
U> Quorate: Yes, 3 node. Aku mau taruh VM ringan aja di pve-02.lan, misalnya Home Assistant.
A> Cocok: N100 hemat listrik dan cukup untuk HA. Kalau mau HA pindah otomatis saat node lain mati, perlu storage bersama atau replikasi ZFS antar node, jadi itu pekerjaan berikutnya.
""",
    ),
    _Scene(
        day=54,
        lang="id",
        window="m",
        name="zone2_first",
        keys=("zone2_first",),
        topic="run",
        text="""
U> Pagi. Tadi pertama kali aku coba lari dengan batas detak jantung, HR maksimal 145 sesuai saran, pasang alert di jam Garmin.
A> Bagaimana rasanya?
U> Lambat banget. Pace jadi 7:40/km, di tanjakan GOR Kukusan aku harus jalan kaki karena HR langsung 150. Malu juga disalip ibu-ibu.
A> Itu wajar di minggu-minggu awal: tubuh belum efisien di intensitas rendah, jadi pace terasa sangat pelan. Dengan konsisten tiga sampai empat kali seminggu, pace di HR yang sama biasanya membaik dalam enam sampai delapan minggu.
U> Tapi ngaruh nggak sih? Rasanya kayak nggak latihan.
A> Justru itu intinya: lari pelan membangun kapasitas aerobik dan daya tahan tanpa menumpuk kelelahan, sehingga sesi kerasmu nanti bisa benar-benar keras. Banyak pelari amatir terlalu sering lari di zona tengah yang terlalu berat untuk pemulihan dan terlalu ringan untuk meningkatkan kecepatan.
U> Oke, total 8 km dalam 1 jam 2 menit. HR rata-rata 141.
A> Sesuai target. Jadikan tiga lari minggu ini dengan batas yang sama, dan catat pace di HR 140 tiap minggu untuk melihat perkembangannya.
""",
    ),
    _Scene(
        day=56,
        lang="id",
        window="e",
        name="budget_envelope",
        keys=("budget_envelope",),
        topic="budget",
        text="""
U> Malam. Gajian kemarin, aku mau bikin pembagian pos gaji yang jelas, tiap pos punya rekening atau kantong sendiri di aplikasi bank. Gaji bersih Rp18.500.000.
A> Boleh. Sebutkan pos-pos yang kamu mau, nanti aku cek totalnya.
U> Iuran rumah ke Ibu 3 juta, makan 3,5 juta, transport 1,2 juta, listrik dan internet 600 ribu, makan di luar dan jajan 1,5 juta, dana darurat 2 juta, reksa dana 3 juta, hobi lari dan homelab 1 juta, tabungan buat nikahan Dewi 1,5 juta.
A> Totalnya:
| Pos | Jumlah |
|---|---|
| Iuran rumah (Ibu) | Rp3.000.000 |
| Makan | Rp3.500.000 |
| Transport | Rp1.200.000 |
| Listrik dan internet | Rp600.000 |
| Makan di luar dan jajan | Rp1.500.000 |
| Dana darurat | Rp2.000.000 |
| Reksa dana | Rp3.000.000 |
| Hobi | Rp1.000.000 |
| Tabungan nikahan Dewi | Rp1.500.000 |
| **Jumlah** | **Rp17.300.000** |
Sisa Rp1.200.000 belum punya pos.
U> Sisanya masukin ke pos "tak terduga".
A> Pas Rp18.500.000. Aturan mainnya: kalau satu kantong habis, pindahkan dari kantong lain secara sadar dan catat, jangan ambil dari dana darurat. Kantong "Jago" atau "Pocket" di aplikasi bank bikin ini gampang karena saldonya terpisah.
U> Aku pakai Pocket di aplikasi bank. Udah bikin sepuluh, autodebet tiap tanggal 26.
A> Mantap. Setelah satu bulan, kita evaluasi mana pos yang kebesaran atau kekecilan.
""",
    ),
    _Scene(
        day=58,
        lang="en",
        window="e",
        name="book_ban",
        keys=("book_ban",),
        topic="reading",
        text="""
U> I counted the unread books on my shelf: eleven. And three more on the Kindle. Yet I bought two more at the Gramedia sale last weekend.
A> A backlog that keeps growing usually means buying has become its own hobby. Do you want to set a rule, or just be aware of it?
U> A rule. No new books until the pile is down to three.
A> Clear and measurable. A few exceptions keep it from breaking at the first temptation:
- Library loans, including iPusnas, are allowed.
- Gifts are allowed.
- Books needed for work or the new job don't count.
Anything else goes on a wishlist with the date you wanted it; if you still want it when the pile hits three, buy it then.
U> I like the wishlist idea. Put "Tomorrow, and Tomorrow, and Tomorrow" as the first entry.
A> Added to the wishlist. Which of the eleven are you starting with?
U> The shortest ones first, to get momentum: "Seperti Dendam, Rindu Harus Dibayar Tuntas" and "The Old Man and the Sea".
A> Good strategy; two short wins make the pile visibly smaller. Tell me when you hit eight and we'll celebrate with a library loan.
""",
    ),
    _Scene(
        day=60,
        lang="id",
        window="e",
        ref="iron_low",
        topic="run",
        text="""
U> Hasil lab ulang keluar. Feritin sekarang 41, hemoglobin 13,8. Dibanding hasil <<ref>>, waktu dokter bilang kadar zat besiku rendah, ini naik jauh.
A> Kabar bagus: dari 18 ke 41 dalam sebulan artinya tablet dan perubahan kebiasaan tehmu bekerja. Apa kata dokter soal lanjutannya?
U> Dokter bilang lanjut tablet sebulan lagi, terus cek lagi. Lari boleh mulai ditambah pelan-pelan.
A> Masuk akal, karena cadangan besi butuh waktu untuk penuh. Untuk lari: tambah volume maksimal sekitar 10% per minggu, dan intensitas kembali bertahap, satu sesi kualitas seminggu dulu.
U> Pantas lari minggu ini terasa ringan. Pace easy turun ke 6:45 di HR yang sama.
A> Itu bukti yang paling jelas. Catat di log latihan: tanggal lab, angka feritin, dan pace di HR yang sama, supaya kalau suatu hari terasa lemas lagi, kamu punya pembanding.
U> Udah aku catat. Tehnya tetap jam tiga sore ya.
A> Tetap, jauh dari tablet dan dari makan. Kebiasaan itu murah dan jelas membantu.
""",
    ),
    _Scene(
        day=62,
        lang="id",
        window="m",
        name="modem_reset_2",
        keys=("modem_bridge",),
        topic="network",
        text="""
U> Pagi. Internet mati dari subuh. Ternyata ONT ZTE F670L di-reset dari pusat ISP waktu update firmware semalam, balik ke setelan pabrik lagi. Mode router lagi, bukan bridge.
A> Langkahnya sama seperti waktu ONT diganti teknisi tanggal <<d34_id>>: login ke 192.168.1.1, hapus koneksi INTERNET mode Route, buat ulang mode Bridge dengan VLAN dari ISP, binding ke LAN1, lalu Connect di pfSense. Akun admin yang kamu dapat dari teknisi masih berlaku?
U> Masih, untung aku catat. Udah bridge lagi, pfSense dapat IP publik.
A> Bagus. Karena ini sudah kedua kalinya, dua hal supaya lain kali lebih cepat:
1. Simpan backup konfigurasi ONT (Management > Device Management > User Configuration Management) setelah diset bridge, jadi tinggal restore.
2. Pasang monitor di Uptime Kuma yang ping gateway ISP, supaya kamu tahu sejak kapan putus.
U> Backup konfig udah aku unduh, aku taruh di `tank/dokumen/homelab/ont-bridge.cfg`.
A> Sip. Kalau ISP reset lagi, restore file itu dan pfSense tinggal Connect. Pertimbangkan juga minta ISP mengaktifkan mode bridge dari sisi mereka, beberapa layanan bisa mengunci konfigurasi itu supaya update firmware tidak mengembalikannya.
""",
    ),
    _Scene(
        day=64,
        lang="en",
        window="e",
        name="wg51834",
        keys=("wg51834",),
        topic="network",
        text="""
U> I want to help Mbah's house in Yogya remotely: their router is a MikroTik hAP ax2, behind CGNAT. Plan is a WireGuard hub on the small VPS in Singapore.
A> A hub works well for CGNAT on both ends: each side dials out to the VPS, and the VPS routes between them. Is anything already running WireGuard on that VPS?
U> Yes, wg0 on 51820 for my own devices. I'll make wg1 for family and put it on UDP port 51834.
A> Separate interface, separate port, clean. On the VPS:
```
[Interface]
Address = 10.9.0.1/24
ListenPort = 51834
PostUp = sysctl -w net.ipv4.ip_forward=1

[Peer]
# mikrotik-mbah
AllowedIPs = 10.9.0.2/32, 192.168.88.0/24
```
Open UDP 51834 in the VPS firewall and in the provider's security group; both have to allow it.
U> The MikroTik side: RouterOS 7 has WireGuard built in?
A> Yes. Create the interface, add the VPS as a peer with endpoint port 51834 and `persistent-keepalive=25s` so the CGNAT mapping stays open, and add a route for 10.9.0.0/24 through the wireguard interface. Also allow the tunnel in the MikroTik's input and forward chains.
U> Handshake is up. I can open the MikroTik's WebFig from my laptop through the VPS.
A> Done. Keep the family tunnel's AllowedIPs narrow so a device at Mbah's can't reach your home network, only the other way around.
""",
    ),
    _Scene(
        day=70,
        lang="id",
        window="e",
        ref="pbs_prune",
        topic="proxmox",
        text="""
U> Datastore PBS udah 91%. Kayaknya aturan retensi yang kita nentuin <<ref>> terlalu longgar buat VM Immich yang isinya berubah terus.
A> Coba lihat siapa yang paling makan: di PBS, Datastore > Content, urutkan per grup backup. VM yang blok-bloknya berubah tiap hari membuat deduplikasi kurang efektif.
U> VM 120 Immich sendiri 1,9 TB dari 3,3 TB. Masalahnya disk data foto ikut di-backup, padahal fotonya sudah ada di NAS dan B2.
A> Itu biang keroknya. Dua langkah:
1. Di VM 120, tandai disk data foto dengan `backup=0` supaya tidak ikut vzdump, karena foto sudah dilindungi di NAS, B2, dan NAS kedua di Bogor.
2. Untuk grup VM 120, buat aturan retensi sendiri yang lebih ketat di prune job khusus: keep-daily 3 dan keep-weekly 2.
Setelah itu jalankan prune dan garbage collection manual.
U> Udah. GC lagi jalan, dari perkiraan ukuran chunk yang dilepas, nanti turun ke sekitar 54%.
A> Itu turun jauh. Sisakan ruang minimal 20% di datastore, karena GC butuh ruang untuk bekerja dan datastore yang penuh bisa bikin backup gagal di tengah malam.
U> Aku pasang notifikasi juga kalau lewat 80%.
A> Bagus. Evaluasi lagi bulan depan setelah pola backup harian stabil.
""",
    ),
    _Scene(
        day=75,
        lang="en",
        window="e",
        ref="budget_envelope",
        topic="budget",
        text="""
U> Revisiting the monthly spending plan with envelopes that we set up on <<ref>>. The eating-out envelope was empty by the 16th, and I already moved money into it twice.
A> Two refills in under three weeks means the envelope was sized for the month you wished you had, not the one you have. What drained it?
U> Lunches near the office since the canteen closed for renovation, plus two dinners with college friends.
A> The canteen closing is a structural change, not a lapse, so the lunches belong in the food envelope rather than eating out. Move Rp600k from "tak terduga" to food for the renovation period, and keep the eating-out envelope at Rp1.5 million for the social stuff.
U> And the emergency fund envelope, should I pause it?
A> Don't pause it; lower it if you must. Even Rp1 million a month keeps the habit, and the habit is worth more than the amount.
U> OK: food +600k, emergency fund stays at 2 million, hobby envelope -200k because I'm not buying hardware this month.
A> Balanced again, the total still matches your salary. Check in at the end of the month and see whether the food envelope survives the renovation.
""",
    ),
    _Scene(
        day=83,
        lang="id",
        window="m",
        name="pb_10k",
        keys=("pb_10k",),
        topic="run",
        text="""
U> Pagi! Barusan selesai lomba 10K Depok Run, catatan waktu 52:40. Rekor pribadiku sebelumnya 55:12.
A> Selamat! Potong dua setengah menit itu besar. Bagaimana strateginya?
U> Sesuai saran: 3 km pertama ditahan di 5:30, terus naik ke 5:15, km terakhir habis-habisan 4:58. Split negatif.
A> Itu eksekusi yang rapi. Split negatif di 10K biasanya tanda kamu bisa lebih cepat lagi di lomba berikutnya, karena energi masih tersisa di akhir.
U> Kayaknya efek zat besi yang udah normal plus latihan pelan berbulan-bulan.
A> Kombinasi itu masuk akal: kapasitas aerobik dari lari pelan, dan tubuh yang kembali bisa membawa oksigen dengan baik. Sekarang istirahat aktif dua hari, jalan kaki atau lari sangat pelan, sebelum latihan biasa lagi.
U> Foto finish-nya lucu, aku merem. Tapi medalinya bagus.
A> Medalinya yang diingat, fotonya jadi cerita. Catat di log latihan: cuaca, sepatu, sarapan, dan split per km, supaya strategi ini bisa diulang di lomba berikutnya.
""",
    ),
)


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


# (requirement, user template, assistant template). The requirement is "any", "cat" (once
# Miso lives with them), "job_pre" (between the recruiter's call and the decision),
# "job_post" (after it) or "run" (not while the shin heals); a trailing "!" means a one-off
# event that happens on one day only.
_LIFE_BEATS: tuple[tuple[str, str, str], ...] = (
    (
        "any",
        "Took the KRL from Depok Baru to <<station>> [[this morning|today]] and it was <<crowd>>.",
        "[[Commutes like that eat the morning.|That sets the tone for a day.|The KRL giveth and the KRL taketh away.]] [[Did you manage to get anything done on the ride, or was it survival mode?|Did you at least get a seat on the way back?|How long did the whole trip take in the end?]]",
    ),
    (
        "any",
        "It rained from <<t1>> until <<t2>> and the road near <<spot>> flooded again. [[Took me ages to get home.|I waited it out with a bowl of bakso.|My shoes are still wet.]]",
        "[[Rainy season in Depok is relentless.|That stretch floods every time, doesn't it?|<<t1>> to <<t2>> is a long downpour.]] [[Did you wait it out somewhere dry?|Is the house okay, no leaks?|Did Ibu get home before it started?]]",
    ),
    (
        "any",
        "Tried cooking <<dish>> [[tonight|for lunch today]], and <<dish_result>>.",
        "[[That counts as a win in my book.|Cooking for the family is a brave experiment.|That's not an easy dish to start with.]] [[Whose recipe were you following?|Will you try it again?|What would you change next time?]]",
    ),
    (
        "any",
        "There's a new coffee place near the office, <<cafe>>. Their <<drink>> is <<price>>.",
        "[[Is it good enough to become a habit, or a once-a-week treat?|<<price>> for <<drink>> is the going rate now, sadly.|Worth the detour?]] [[Your coffee envelope might have opinions.|Did you try anything else there?|How's the seating for working?]]",
    ),
    (
        "any",
        "Ibu spent an hour on the phone with her sister in <<city>> and then told me all of it over dinner. Apparently <<news>>.",
        "[[Family news always travels through the mothers first.|That's a lot of news for one phone call.|<<city>> sounds eventful.]] [[How did Ibu take it?|Are you expected to visit?|Did she want your opinion or just an audience?]]",
    ),
    (
        "any",
        "Kak Rina is <<rina>>.",
        "[[She always has a project going, doesn't she?|That sounds very like her.|Good for her.]] [[Are you roped in as a helper?|Has it affected the house yet?|Do you get to test the results?]]",
    ),
    (
        "any",
        "I fell asleep at <<sleep_t>> again watching <<show>>.",
        "[[That's another late night.|<<sleep_t>> is late for someone who gets up early.|The screen wins again.]] [[Is it the show, or is it hard to switch off after work?|How did the morning feel?|Want to try a cut-off time this week?]]",
    ),
    (
        "any",
        "Listened to <<podcast>> on the way home, an episode about <<pod_topic>>.",
        "[[Did anything from it stick with you?|What was the main idea?|Would you recommend that one?]] [[I like when a commute turns into a lecture.|Those episodes tend to stay in the head.|That's a good use of a commute.]]",
    ),
    (
        "any",
        "Spent most of [[Saturday|Sunday|the afternoon]] <<weekend>>.",
        "[[A weekend with something to show for it.|Honest work.|That's a full day.]] [[Did you get any time just for yourself?|Was Ibu pleased?|Are you sore now?]]",
    ),
    (
        "any",
        "Had dinner with <<friend>>, who just <<friend_news>>.",
        "[[How was it to catch up?|That's big news.|Sounds like a good evening.]] [[People's lives move fast when you don't see them for a while.|It's good to keep those friendships warm.|Will you see them again soon?]]",
    ),
    (
        "any",
        "Spent an hour behind the rack tidying cables and <<cable>>.",
        "[[The least glamorous homelab work is the most satisfying.|Future you will be grateful.|Cable day is a good day.]] [[Anything you found that you'd forgotten about?|Did you take a photo of the result?|How long will it stay tidy, honestly?]]",
    ),
    (
        "run",
        "Easy <<ekm>> km [[this morning|before work|after maghrib]], felt <<feel>>.",
        "[[Logged.|Nice.|<<ekm>> km is a solid start to the day.]] [[Was the pace where the plan wanted it, or did you drift faster?|How was the humidity?|Any aches afterwards?]]",
    ),
    (
        "any!",
        "Dewi sent the draft guest list: <<guests>> names on our side alone.",
        "[[That's a lot of aunties.|<<guests>> is a big number for one side.]] [[Is Ibu adding more names, or crossing some off?|Who decides the final cut?]]",
    ),
    (
        "any",
        "The family group chat has been arguing about <<debate>> for two days.",
        "[[Every wedding needs one big debate.|Classic wedding group chat.|Two days is a respectable argument.]] [[Which side are you on, or are you staying out of it?|Has Dewi said anything?|Who usually wins these?]]",
    ),
    (
        "any",
        "Read <<pages>> pages of <<book>> before bed.",
        "[[How are you finding it so far?|Is it holding your attention?|Which part are you at?]] [[Reading before bed beats the phone.|That's a good habit to keep.|<<pages>> pages is a good session.]]",
    ),
    (
        "any",
        "Finally got <<song>> right on the guitar, chords and all.",
        "[[Did you play it for anyone yet, or is it still a bedroom concert?|How long did that take to learn?|That one's a crowd pleaser.]] [[Ibu might request it.|What's next on the list?|Your fingers must hurt.]]",
    ),
    (
        "any",
        "Paid <<bill>> today, one less thing on the list.",
        "[[Small admin wins count.|Good to have that out of the way.|Done is done.]] [[Anything else due this month?|Did it cost what you expected?|Want me to remind you next year?]]",
    ),
    (
        "any",
        "Our neighbour <<neighbor>> <<neighbor_thing>>.",
        "[[The neighbourhood is full of surprises.|That's very neighbourly.|Never a dull week on your street.]] [[How does Ibu feel about it?|Will that affect you at all?|Did you return the favour?]]",
    ),
    (
        "any",
        "Bought <<item>> on Tokopedia for <<iprice>>.",
        "[[Is it replacing something, or is it a new thing in your life?|<<iprice>> sounds fair.|Hope it arrives quickly.]] [[Curious what pushed you to buy it.|Which envelope does it come out of?|Did you compare sellers?]]",
    ),
    (
        "any",
        "Watched <<movie>> with Kak Rina [[tonight|after dinner]].",
        "[[Did you both like it, or did one of you spend it on the phone?|Good pick?|Was it her choice or yours?]] [[Movie nights at home are underrated.|Who fell asleep first?|Would you watch it again?]]",
    ),
    (
        "any",
        "My phone's battery health is down to <<bh>>% and it dies [[by 8 p.m.|before dinner.|before the workday ends.]]",
        "At <<bh>>% a battery replacement is cheaper than a new phone. [[Want to look for an authorised service centre nearby?|Carry a power bank until then.|Check the warranty first.]]",
    ),
    (
        "any",
        "Work was <<work_detail>>.",
        "[[Some days are like that.|That's a day.|Sounds draining.]] [[Did you get to do any of the work you actually wanted to do?|Anything to carry into tomorrow?|How are you winding down?]]",
    ),
    (
        "any",
        "Took some photos of <<photo>> with the old Fujifilm [[today|this evening|on the way home]].",
        "[[Will you share them somewhere, or are they just for you?|Film or digital this time?|That camera still earns its keep.]] [[Send the best one to Ibu.|Any favourites?|Light must have been good.]]",
    ),
    (
        "any",
        "My cousin <<cousin>> asked me to fix her laptop again. This time <<laptop>>.",
        "[[Being the family IT department never ends.|The family help desk strikes again.|Every family has one of you.]] [[Did you fix it, or did you tell her to buy a new one?|Was it a quick fix?|Maybe teach her the fix this time?]]",
    ),
    (
        "any!",
        "Ibu wants to video call Mbah by herself. We practised <<times>> times today and she did the last one alone.",
        "[[That's lovely.|That's real progress.]] [[Maybe write the steps on a card next to her phone?|Mbah must have been delighted.]]",
    ),
    (
        "any",
        "Went to the weekend market at <<market>> and came back with <<market_item>>.",
        "[[Markets are dangerous for the wallet.|That sounds like a good haul.|A proper Sunday.]] [[What are you going to do with it?|Was it crowded?|Did Ibu approve?]]",
    ),
    (
        "any",
        "Got a haircut at <<barber>>. <<haircut>>",
        "[[Haircuts are a gamble every time.|A fresh haircut fixes half a week.|Good timing before the wedding season.]] [[Did Ibu notice?|Will you go back to the same place?|How much do they charge now?]]",
    ),
    (
        "any",
        "The office had <<office_event>> today.",
        "[[Those break up the week nicely.|Nice change from the usual.|Office life has its moments.]] [[Did you enjoy it, or count the minutes?|Anything memorable?|Who organised it?]]",
    ),
    (
        "any!",
        "Cleaned out my email inbox: from <<emails>> unread to zero in one evening.",
        "[[Inbox zero is a rare sight, enjoy it.|That's heroic.]] [[Any filters set up so it stays that way?|What was most of it?]]",
    ),
    (
        "any",
        "The motorbike needs <<moto_fix>>. The mechanic quoted <<moto_price>>.",
        "[[That's roughly the usual price around Depok.|Better fixed now than on the road.|<<moto_price>> is fair for that.]] [[Will you do it this week?|Is it still safe to ride meanwhile?|Same mechanic as last time?]]",
    ),
    (
        "any",
        "Kak Rina and I argued about <<argue>>. [[We made up over martabak.|Ibu had to step in.|We agreed to disagree.]]",
        "[[Martabak has ended many family disputes.|Classic sibling resolution.|Sweet or savoury martabak?]] [[Who was right, in the end?|Did you at least agree on the toppings?|Does Ibu know?]]",
    ),
    (
        "any",
        "Called Dewi for an hour; she's stressed about <<dewi_stress>>.",
        "[[Weddings put a lot on the bride.|That's a lot on her plate.|Planning a wedding is a part-time job.]] [[Is there something you can take off her list?|How did you try to help?|Does Arief help with that part?]]",
    ),
    (
        "any",
        "Groceries at Superindo came to <<groc>> today, and I only went in for [[eggs|milk|bread]].",
        "[[Supermarkets are designed for exactly that.|That's how they get you.|<<groc>> for a quick trip hurts.]] [[Was there anything you didn't really need?|Which envelope does that come from?|Next time bring a list?]]",
    ),
    (
        "any!",
        "Started journaling again, <<journal>>.",
        "[[Small and regular beats long and rare.|That's a gentle habit.]] [[What made you pick it up again?|Do you write in the morning or at night?]]",
    ),
    (
        "any",
        "My lower back hurts from sitting all day. <<back>>",
        "[[A timer to stand up every 45 minutes helps more than any chair.|Backs complain quietly and then loudly.|Sitting is the new smoking, they say.]] [[Have you tried stretching between meetings?|Is it worse on office days or at home?|Maybe a physio if it lasts?]]",
    ),
    (
        "run",
        "Tried a new running route along <<route>>, [[<<ekm>> km in total|mostly flat|with one nasty hill]].",
        "[[New routes make the same distance feel shorter.|Exploring is half the fun.|Good to mix it up.]] [[Any hills?|Will it become a regular one?|Safe to run there early?]]",
    ),
    (
        "cat",
        "Miso's new favourite toy is <<toy>>.",
        "[[Expensive toys never win against free ones.|Cats have excellent taste in free toys.|Of course it is.]] [[Does she bring it back to you?|How long before it disappears under the sofa?|Does she hide it?]]",
    ),
    (
        "cat",
        "Bought Miso <<cat_item>> for <<cat_price>>. She prefers the box it came in.",
        "[[The box always wins.|Of course she does.|Classic cat.]] [[Keep the box, it's part of the furniture now.|Maybe the item will grow on her.|Did you at least get a photo of her in it?]]",
    ),
    (
        "cat",
        "Miso <<antic>>.",
        "[[She's settling in with real personality.|That cat has opinions.|Miso is a character.]] [[Is she getting along with Ibu?|Did you get a photo?|Is she eating well?]]",
    ),
    (
        "cat!",
        "Miso finally slept on my bed the whole night instead of the cardboard box.",
        "That's a big trust step for a rescued cat. Did you sleep well, or were you afraid to move?",
    ),
    (
        "cat!",
        "Ibu pretends she doesn't like Miso, but I caught her sharing her fried fish.",
        "The strict ones always fold first. Maybe ask her to keep it to tiny pieces, without the salty skin.",
    ),
    (
        "job_pre",
        "Still thinking about the Kilat Pay thing. One worry: <<job_thought>>.",
        "[[That's a fair worry to write down.|Worth taking seriously.|Understandable.]] [[What would have to be true for it not to matter?|Is it a deal-breaker or a trade-off?|Have you talked to anyone about it?]]",
    ),
    (
        "job_pre!",
        "Prepared for the interviews by re-reading my notes on idempotency and ledgers during lunch.",
        "Good use of a lunch break. Anything you realised you'd forgotten?",
    ),
    (
        "job_post",
        "Handover progress: <<handover>>.",
        "[[Every piece written down is one less question for the team later.|That's the kind of handover people remember.|Steady progress.]] [[What's left on the list?|How is Fajar taking it?|Are you on track for the last day?]]",
    ),
    (
        "job_post!",
        "Keep thinking about the first day at the new job. What if I'm slower than they expect?",
        "Everyone is slow in their first month, and good teams expect it. What would make the first week feel like a win for you?",
    ),
)


@dataclass(frozen=True)
class _Beat:
    """A planted part of a long English session; ``key`` is the question key it answers."""

    text: str
    key: str = ""


# day -> sessions; a session is (window, items), an item is a planted ``_Beat`` or a count of generic beats.
_LONG_DAYS: dict[int, tuple[tuple[str, tuple[_Beat | int, ...]], ...]] = {
    22: (
        (
            "a",
            (
                3,
                _Beat(
                    key="recruiter_call",
                    text="""
U> Something unexpected: a recruiter from Kilat Pay called me at lunch. They're a payments fintech with offices in SCBD.
A> Oh, interesting! Did you reach out to them, or did they find you?
U> They found me through an old conference talk I gave about Postgres. The role is senior backend engineer on their settlement and reconciliation team. Mostly Go and Postgres, some Python for data jobs.
A> That's close to what you already do with invoices and ledgers. What did she say about the process?
U> Four steps: a take-home, a system design round, a chat with the engineering manager, then the offer call. She said the budget for the role goes up to about 40 juta a month, and they're hybrid, three days in the office.
A> That's a serious jump from what you've told me about your current pay. How do you feel about it?
U> Flattered and nervous. I said I'd think about it over the weekend and reply by Monday.
A> A weekend sounds right. Maybe write down what would make you say yes before the numbers start pulling you.
""",
                ),
                2,
            ),
        ),
        (
            "e",
            (
                5,
                _Beat(
                    key="rina_just_try",
                    text="""
U> Told Kak Rina about the call at dinner. She said "you've been complaining about the same legacy code for two years, just try".
A> Sisters have a way of saying the quiet part out loud. Does she have a point?
U> She does. I just don't like leaving things half done.
A> Nothing is ever fully done in software; the question is whether you'd leave it in good hands.
""",
                ),
                3,
            ),
        ),
    ),
    24: (
        (
            "a",
            (
                _Beat(
                    key="cat_adopt",
                    text="""
U> Big news: we adopted a kitten today! From Rumah Singgah Kucing Pamulang, a small shelter run by a retired teacher, Bu Wiwik.
A> Congratulations! Tell me everything. What does she look like?
U> Orange tabby, about five months old, white socks on her back feet. They found her in a drain near Pamulang market during the floods in February.
A> Poor thing, and lucky now. Does she have a name yet?
U> Miso. Kak Rina said she's the colour of miso soup, and Ibu can actually pronounce it.
A> Miso is perfect. How did the adoption itself work?
U> A Rp250.000 fee, which covers deworming and the first flea treatment. Bu Wiwik made us promise to keep her indoors and to send her a photo every month.
A> That sounds like a shelter that cares. First nights can be scary for a kitten, so start her in one small room.
U> She's in my room with a litter box, water, and a cardboard box she refuses to leave.
A> The box is her safe place for now. She'll come out when she's ready, probably at 3 a.m.
""",
                ),
                3,
            ),
        ),
        (
            "e",
            (
                4,
                _Beat(
                    key="cat_first_touch",
                    text="""
U> Update: the kitten came out of the box and ate half her food while I pretended to read.
A> Pretending not to look is the best trick there is. Did she let you touch her?
U> One head bump against my hand, then back into the box.
A> One head bump on day one is a great start.
""",
                ),
                4,
            ),
        ),
    ),
    27: (
        ("m", (6,)),
        (
            "e",
            (
                2,
                _Beat(
                    key="takehome",
                    text="""
U> Finished the Kilat Pay take-home today. They allowed 72 hours, I spent about 9 hours spread over the weekend.
A> What was the assignment?
U> Reconcile a bank statement CSV against an export of the internal ledger. The tricky parts: duplicate bank lines, partial settlements where one ledger entry is paid with three transfers, and amounts off by the Rp6.500 bank fee.
A> That's a realistic one. How did you handle the partial settlements?
U> Grouped by reference number first, then a greedy match within a three-day window, and anything left over goes to an exceptions report. Python with Decimal everywhere, 41 tests.
A> Decimal everywhere is exactly what a payments team will look for. Did you write down the trade-offs?
U> A two-page README, including what I'd do with more time: a tolerance table per bank instead of one fee constant.
A> Then you've shown how you think, not just that it runs. When will they get back to you?
U> Within a week, they said.
""",
                ),
                4,
            ),
        ),
    ),
    29: (
        (
            "a",
            (
                2,
                _Beat(
                    key="wedding_venue",
                    text="""
U> Dewi called: she and Arief finally booked the reception venue. Kebun Kinasih in Lembang, a garden venue looking out over the tea hills.
A> Lovely. Is the akad there too?
U> No, the akad is in the morning at Masjid Pusdai, and the reception at Kebun Kinasih starts at 11:00. About 350 guests.
A> A garden in Lembang can be cold and rainy. Do they have a plan for bad weather?
U> A big glass pavilion as backup. Dewi was so relieved, they looked at seven places.
A> Seven venues is a lot of weekends. Tell her congratulations from me, or rather from you.
""",
                ),
                2,
            ),
        ),
        (
            "e",
            (
                3,
                _Beat(
                    key="training_pace",
                    text="""
U> I signed up for the Borobudur Marathon in November. My first full marathon.
A> That's a big goal! How are you going to train for it?
U> With the Runna app. It built a plan: four runs a week, easy runs at 6:50 per km, tempo at 5:45, intervals on Tuesdays, and long runs building up to 32 km by October.
A> 6:50 for easy runs is honest, not ego pace. How does it feel so far?
U> Annoyingly slow. But the app says most of my running should feel like I could hold a conversation.
A> It's right. Marathons are built on the easy kilometres.
""",
                ),
                3,
            ),
        ),
    ),
    33: (
        (
            "a",
            (
                _Beat(
                    key="cat_vaccine",
                    text="""
U> Took Miso to the vet this morning for her first vaccination, at Klinik Hewan Cinere with drh. Sari.
A> How did she handle it?
U> Screamed in the carrier for the whole ride, then was completely calm on the table. She weighs 2.3 kg now. She got the tricat vaccine, and the vet found ear mites, so we have drops for two weeks.
A> Ear mites are very common in rescued kittens and easy to treat. When is the next shot?
U> A booster in four weeks, then rabies at six months. The visit was Rp385.000 including the drops.
A> Put the booster in the calendar now. And give her a treat after every ear drop so she doesn't start hiding from you.
""",
                ),
                4,
            ),
        ),
        (
            "e",
            (
                3,
                _Beat(
                    key="klara",
                    text="""
U> Finished Klara and the Sun tonight. Couldn't put it down for the last 80 pages.
A> What stayed with you?
U> Klara's faith in the Sun, honestly. She's a machine who sees the world in boxes and still builds something like a religion out of what she observes. And the ending in the yard, sorting through her memories.
A> Ishiguro is good at narrators who don't understand what the reader already understands. Did it connect to anything for you?
U> A bit to Bapak. He died when I was in college, and I catch myself keeping my memories of him very tidy, the way she does.
A> That's a gentle way to hold someone. Thank you for telling me.
""",
                ),
                3,
            ),
        ),
    ),
    36: (
        (
            "e",
            (
                2,
                _Beat(
                    key="design_round",
                    text="""
U> The system design round with Kilat Pay was today: design a payout service that sends money to thousands of merchant bank accounts every evening.
A> A good topic. What did you focus on?
U> Idempotency keys per payout, an outbox table so the payout row and its event commit together, and a state machine: pending, sent, confirmed, failed, reversed. They pushed hard on what happens when the bank API times out.
A> That's where most designs break. What did you answer?
U> Never retry blindly. Mark it unknown, ask the bank's status endpoint, and only resend if the bank confirms it never got it. Then a reconciliation the next morning as the final safety net.
A> That's the answer of someone who's been burned before. How did they react?
U> The interviewer smiled and said they learned that the hard way too.
""",
                ),
                4,
            ),
        ),
        ("m", (7,)),
    ),
    39: (
        (
            "a",
            (
                _Beat(
                    key="shin_injury",
                    text="""
U> Bad news from running. The inside of my left shin has been sore for a week, and today it hurt from the first kilometre, so I stopped at 3 km.
A> I'm sorry. Pain along the inside of the shin that starts early in a run sounds like shin splints. Have you had it looked at?
U> Saw a sports physio in Depok this afternoon, Kak Nanda. She confirmed shin splints, probably from adding distance too fast in the first weeks of the plan.
A> That fits: the volume jumped and the bone and tendons didn't have time to adapt. What did she prescribe?
U> No running for ten days. Cycling or swimming is fine. Calf raises, ice after activity, then back to running with walk-run intervals.
A> Ten days feels long but protects the November goal. The stationary bike at the office gym counts as training.
""",
                ),
                3,
            ),
        ),
        (
            "e",
            (
                3,
                _Beat(
                    key="mc_request",
                    text="""
U> Dewi asked me tonight to be the MC at her reception. In Indonesian, with a bit of Sundanese for Arief's family.
A> What an honour! How do you feel about it?
U> Terrified. My Sundanese is limited to "hatur nuhun" and "punten".
A> Those are already two of the most useful words. Keep the Sundanese to greetings and thanks, and ask someone from Arief's side to check your pronunciation.
U> Good idea. Arief's cousin Asep is a radio announcer in Bandung, I'll ask him.
A> A radio announcer is the perfect coach. Start a draft script now and rehearse it out loud a few times.
""",
                ),
                3,
            ),
        ),
    ),
    42: (
        (
            "e",
            (
                2,
                _Beat(
                    key="wo_meeting",
                    text="""
U> Two-hour video call tonight with the wedding organizer, Mbak Laras from Lestari WO, together with Dewi and Arief.
A> How did it go?
U> Rundown draft, vendor list, and the budget: about Rp85 juta for 350 guests, with catering more than half of it. I said I'd chip in Rp5 juta.
A> That's generous of you. Anything decided?
U> Sage green as the family colour, and my script has to be ready two weeks before the day. Mbak Laras will send a template.
A> Two weeks ahead leaves time to rehearse with the real rundown.
""",
                ),
                4,
            ),
        ),
        ("m", (7,)),
    ),
    45: (
        (
            "e",
            (
                _Beat(
                    key="job_offer",
                    text="""
U> Kilat Pay called with an offer today, nine days after the design round on <<d36_en>>!
A> Congratulations! What's in it?
U> 38 juta gross a month, a 13th-month salary, stock options vesting over four years with a one-year cliff, and a start date at the beginning of June. Hybrid, three days in SCBD.
A> That's a strong offer. How does it compare with what you have now?
U> About 45% more than my current salary. But the commute is longer, and I'd be leaving a team I really like.
A> Both are real. Do you have time to decide?
U> One week.
A> Then use it: talk it through with Kak Rina and Ibu, and maybe with someone who has worked there.
""",
                ),
                4,
            ),
        ),
        ("m", (6,)),
    ),
    49: (
        (
            "e",
            (
                _Beat(
                    key="job_accept",
                    text="""
U> I decided: I'm taking the Kilat Pay job. Signed the offer letter this afternoon.
A> Congratulations, Gading! How do you feel?
U> Relieved, mostly. Talking to Dimas, who worked there for two years, helped: he said the on-call is sane and people stay.
A> That's the kind of thing you can't learn in an interview. Did you tell your team?
U> Told Mas Yoga in a 1:1 after lunch. He was sad but not surprised. My last day is <<d88_en>>.
A> Leaving on good terms matters. What's first for the handover?
U> A list of everything I own: the invoice jobs, the deploy scripts, the reconciliation script from the double-charge bug.
A> Write it so Fajar can follow it without you. That's the best goodbye present a team can get.
""",
                ),
                3,
            ),
        ),
        ("m", (6,)),
    ),
    53: (
        (
            "m",
            (
                _Beat(
                    key="cat_wreck",
                    text="""
U> Miso chaos this morning. She jumped onto the top shelf of the rack and knocked the Raspberry Pi 4 off. It fell about a metre onto the tiles.
A> Oh no. Is the Pi alive?
U> The board is fine, but the microSD card snapped in half. That Pi runs the e-ink family calendar in the living room.
A> At least it's the calendar and not the router. Did you have a copy of the card?
U> No, but the setup is a small Python script in git plus one config file. Rebuilt it on a new 32 GB card in an hour.
A> So the lesson cost an hour and a microSD. Maybe a shelf she can't reach, or something on top?
U> Bought a cheap acrylic case with a lid and moved it lower. Now she sits on the lid because it's warm.
A> Cats always win the negotiation. At least she's guarding it now.
""",
                ),
                3,
            ),
        ),
        ("e", (7,)),
    ),
    57: (
        (
            "a",
            (
                _Beat(
                    key="batik_fitting",
                    text="""
U> Family batik fitting today at a tailor near Margonda. Sage green with a mega mendung pattern, the same for everyone on our side.
A> How did it look on you?
U> The tailor says I need to stop running before the wedding or the shirt won't fit. He's joking, I think.
A> Tailors plan for a margin. How long until it's ready?
U> Three weeks. Ibu's kebaya takes longer because of the embroidery.
""",
                ),
                3,
            ),
        ),
        ("e", (8,)),
    ),
    61: (
        (
            "a",
            (
                _Beat(
                    key="cat_booster",
                    text="""
U> Miso had her booster shot this morning. 3.1 kg now, and the ear mites are gone.
A> She's growing fast. Any reaction to the shot?
U> Sleepy all afternoon, then zoomies at 10 p.m. as if nothing happened.
A> That's the usual pattern. Rabies at six months is the next one, right?
""",
                ),
                3,
            ),
        ),
        ("e", (7,)),
    ),
    66: (
        (
            "a",
            (
                _Beat(
                    key="wo_meeting",
                    text="""
U> In Bandung today for the second meeting with Mbak Laras from Lestari WO, this time in person, with Dewi, Arief, Ibu and Arief's parents.
A> How was it in person?
U> Food tasting! We picked a nasi timbel station, soto Bandung and batagor for the stalls. The rundown is final: akad at 08:00, reception from 11:00 to 14:00.
A> Sounds delicious. Anything new for you as the MC?
U> She gave me the final rundown, and I have a rehearsal with Asep next month. Also, Ibu's kebaya from the fitting on <<d57_en>> is finally ready.
A> Then you have everything you need. How was Ibu with Arief's parents?
U> They talked about grandchildren within ten minutes. Dewi wanted to disappear.
""",
                ),
                3,
            ),
        ),
        ("e", (6,)),
    ),
    72: (
        (
            "m",
            (
                _Beat(
                    key="long_run_24",
                    text="""
U> Longest run of my life this morning: 24 km around BSD in 2 hours 47 minutes, so just under 7 minutes per km.
A> That's a milestone! How did you fuel?
U> Three gels at km 7, 13 and 19, plus water from a bottle belt. The last 4 km were hard, but the shin didn't complain at all.
A> No shin pain at that distance is the best news of the day. How do you feel now?
U> Like a zombie, but happy. Ate two plates of nasi uduk.
A> Earned. Rest tomorrow, and tell the app so it doesn't schedule anything hard.
""",
                ),
                3,
            ),
        ),
        ("e", (7,)),
    ),
    79: (
        (
            "e",
            (
                _Beat(
                    key="handover_doc",
                    text="""
U> Wrote the handover doc for the invoicing app today, 14 pages. Fajar read it and only had three questions.
A> Three questions for 14 pages is a good sign. What were they?
U> Where the cron secrets live, who to call at the payment gateway, and why one job runs at 04:17 instead of 04:00.
A> The last one is always the interesting story. Why 04:17?
U> Because at 04:00 it collided with the database backup. Nobody remembered until I wrote it down.
""",
                ),
                4,
            ),
        ),
        ("m", (6,)),
    ),
    85: (
        (
            "a",
            (
                _Beat(
                    key="farewell_lunch",
                    text="""
U> The team took me out for a farewell lunch at the Padang place we always go to. Mas Yoga gave a short speech and I almost cried into the rendang.
A> That sounds like a team that will miss you. What did he say?
U> That I leave the code better than I found it, and that the coffee machine will be lonely.
A> Both high compliments. Are you keeping in touch with them?
U> We made a group called "alumni invoicing". Fajar already posted a bug in it.
""",
                ),
                3,
            ),
        ),
        ("e", (7,)),
    ),
}


# --- rina: the sister's own archive, overlapping topics, no questions ------------------

_RINA_SCENES: tuple[_Scene, ...] = (
    _Scene(
        user="rina",
        day=3,
        lang="en",
        window="e",
        topic="ramadan",
        text="""
U> Finally agreed the sahur rota with Gading today. I cook on Tuesday, Thursday and Saturday, he does the other four days, and whoever isn't cooking wakes Ibu.
A> A clear split saves a lot of 3 a.m. negotiations. Do you want help planning your three days?
U> Yes. Five sahur menus I can prep the night before, nothing fried at 3 a.m.
A> Here are five:
1. Overnight oats with dates and banana, plus boiled eggs.
2. Chicken soup with vegetables, reheated, with rice.
3. Tempe bacem made the evening before, with stir-fried water spinach.
4. Nasi tim with minced chicken, steamed while you wash up.
5. Whole-wheat bread, scrambled eggs and avocado, with a glass of milk.
U> Ibu won't eat oats. Swap that one.
A> Swap it for bubur ayam from the pot the night before: just reheat with a splash of water and add toppings.
U> Good. Add kurma to my Pasar Kemiri list for Saturday.
A> Added: dates, eggs, chicken, tempe, water spinach. Anything for Ibu specifically?
U> Low-salt soy sauce, her doctor said so.
A> Added. I'll keep the list grouped by stall so Saturday goes quickly.
""",
    ),
    _Scene(
        user="rina",
        day=26,
        lang="en",
        window="e",
        topic="nas",
        text="""
U> I want my Windows laptop backed up to the NAS automatically. Gading made me a share called `Rina` on nas-utama.
A> File History is built into Windows and works with a network share. Settings > Update & Security > Backup > Add a drive > More options > See advanced settings > Select drive > Add network location, then enter `\\\\192.168.10.5\\Rina`.
U> It asks how often. Default is every hour.
A> Hourly is fine for documents. Set "Keep saved versions" to 6 months so the share doesn't fill up, and exclude the Downloads folder, which is mostly installers.
U> First backup running, 34 GB.
A> The first run takes a while over Wi-Fi. Plug in a cable if you can, and after it finishes, try restoring one file to make sure it works.
U> Tested restoring a spreadsheet from the first version it saved. Works.
A> Then you're covered. The NAS itself is backed up by Gading's jobs, so you now have two copies without thinking about it.
""",
    ),
    _Scene(
        user="rina",
        day=62,
        lang="en",
        window="m",
        topic="run",
        text="""
U> Did my first 5K race this morning with the office running club! 31:20.
A> Congratulations on your first race! How did it feel?
U> The first two kilometres were too fast, I was chasing a colleague. Walked for a minute at km 3 and then finished strong.
A> Starting too fast is the most common first-race lesson. Next time, hold back for the first kilometre and pass people later; it feels much better.
U> Gading said the same thing. He's insufferable about pacing now that he's training for a marathon.
A> He has a point, even if he's annoying about it. Want a simple plan to get under 30 minutes?
U> Yes, three runs a week max.
A> Two easy runs of 30 minutes and one session of 6 x 400 m with 90 seconds walking in between. In six weeks, try another 5K and start at 6:00 per km.
""",
    ),
)


# --- questions ------------------------------------------------------------------------

_QUESTIONS: tuple[_Q, ...] = (
    # plain: same language as the answer, worded differently from it
    _Q(
        "boot_order",
        "id",
        "Kapan aku bikin VM Postgres otomatis nyala lebih dulu dari aplikasinya waktu host dihidupkan?",
    ),
    _Q("orders_index", "en", "When did I get the customer's purchase history query from seconds down to milliseconds?"),
    _Q("porch_light", "id", "Kapan aku atur lampu luar rumah biar hidup sendiri menjelang magrib?"),
    _Q(
        "subnet_router",
        "en",
        "When did I make the whole home network reachable over the mesh VPN without installing it on every device?",
    ),
    _Q(
        "rsync_reversed",
        "id",
        "Kapan aku hampir kehilangan ribuan foto gara-gara sumber dan tujuan sinkronisasi ketuker?",
    ),
    _Q("modem_bridge", "id", "Kapan aja modem ISP balik ke setelan pabrik sampai aku harus pasang bridge lagi?"),
    _Q("hydration", "en", "When did I fix the server and client rendering mismatch caused by time formatting?"),
    _Q("thr_keponakan", "id", "Kapan aku rencanain bagi-bagi uang lebaran buat anak-anak saudara?"),
    _Q("bank_script", "en", "When did I write the script that sorts my bank transactions into categories?"),
    _Q("b2_cost", "id", "Kapan aku ngitung ongkos bulanan nyimpen cadangan foto di cloud?"),
    _Q("kolak", "id", "Kapan kakakku masak takjil manis dari pisang buat buka bareng?"),
    _Q("second_dns", "en", "When did I set up a second DNS filter so rebooting one server doesn't kill the internet?"),
    _Q("zone2_first", "id", "Kapan pertama kali aku lari dibatasi detak jantung supaya tetap santai?"),
    _Q("pg16_upgrade", "en", "When did I move the database to the next major Postgres version?"),
    _Q("sanoid", "id", "Kapan aku atur snapshot per jam yang disimpan sehari penuh buat dataset dokumen?"),
    _Q("book_ban", "en", "When did I decide to stop buying books until I finish the ones I own?"),
    _Q("zigbee_dongle", "id", "Kapan aku ganti dongle Zigbee dan pairing ulang semua sensor?"),
    _Q("silaturahmi", "id", "Kapan aku nyusun urutan kunjungan ke keluarga besar di Jogja pas lebaran?"),
    # answered by a session in the other language (kind derived)
    _Q("wg_mtu", "id", "Kapan aku benerin VPN yang macet kalau kirim file gede?"),
    _Q("bank_dns", "en", "When did the ad blocker break my mother's banking app login?"),
    _Q("bukber_team", "en", "When did I organize the team's fast-breaking dinner and split the bill?"),
    _Q("smb_acl", "id", "Kapan laptop Windows Kak Rina gagal nyimpen file ke folder foto di NAS?"),
    _Q("pb_10k", "en", "When did I set a new personal best over ten kilometres?"),
    _Q("washer_notify", "id", "Kapan aku bikin notifikasi HP kalau mesin cuci udah selesai?"),
    # long English personal conversations (kind derived)
    _Q("cat_adopt", "en", "Where did I adopt my cat from?"),
    _Q("cat_vaccine", "id", "Kapan kucingku dapat suntikan vaksin pertamanya?"),
    _Q("wo_meeting", "en", "When did I meet with my sister's wedding organizer?"),
    _Q("training_pace", "en", "What easy-run pace did my marathon training plan give me?"),
    _Q("takehome", "id", "Kapan aku ngerjain tugas rumah buat proses rekrutmen perusahaan fintech?"),
    _Q("job_offer", "en", "How much was the salary offer from the payments startup?"),
    _Q("wedding_venue", "id", "Di mana resepsi nikahan adikku bakal diadakan?"),
    _Q("mc_request", "en", "When was I asked to host my sister's wedding reception?"),
    _Q("klara", "en", "Which novel narrated by a robot companion did I finish?"),
    _Q("shin_injury", "id", "Kapan kakiku cedera dan disuruh libur lari?"),
    _Q("job_accept", "en", "When did I decide to accept the new job?"),
    _Q("cat_wreck", "en", "When did the cat wreck one of my homelab gadgets?"),
    _Q("long_run_24", "id", "Kapan aku lari paling jauh sampai 24 km?"),
    _Q("recruiter_call", "en", "What did the recruiter tell me about the role in our first call?"),
    # related-only: the wording matches a later day that cites the answer day by ISO date
    _Q("sahur_rota", "en", "When did my sister and I agree on the pre-dawn meal rota?", ("related_only",)),
    _Q("ups_battery", "id", "Kapan aku ganti aki UPS yang bunyi terus di rak server?", ("related_only",)),
    _Q("mudik_ticket", "en", "When did I manage to book the homecoming train seats?", ("related_only",)),
    _Q("drop_prisma", "id", "Kapan diputuskan ninggalin ORM di service billing?", ("related_only",)),
    _Q("iron_low", "id", "Kapan dokter bilang kadar zat besiku rendah?", ("related_only",)),
    _Q("pbs_prune", "id", "Kapan aku nentuin aturan retensi backup di PBS?", ("related_only",)),
    _Q("budget_envelope", "en", "When did I set up the monthly spending plan with envelopes?", ("related_only",)),
    # keyword: only an exact token finds the day
    _Q("zfs8a", "en", "When did the pool report ZFS-8000-8A?", ("keyword",), token="ZFS-8000-8A"),
    _Q("nic_hang", "id", "Kapan log server muncul pesan Hardware Unit Hang?", ("keyword",), token="Hardware Unit Hang"),
    _Q(
        "pending_sector",
        "en",
        "When did a disk show Current_Pending_Sector in SMART?",
        ("keyword",),
        token="Current_Pending_Sector",
    ),
    _Q("nas_gudang", "id", "Kapan aku ngobrolin nas-gudang?", ("keyword",), token="nas-gudang"),
    _Q("pay3817", "en", "What was the fix for PAY-3817?", ("keyword",), token="PAY-3817"),
    _Q("vlan47", "id", "Kapan aku bikin VLAN 47?", ("keyword",), token="VLAN 47"),
    _Q("wg51834", "en", "When did I open UDP port 51834?", ("keyword",), token="51834"),
    _Q("exit137", "id", "Kapan container mati dengan exit code 137?", ("keyword",), token="exit code 137"),
    _Q("pve02", "en", "When did I work on pve-02.lan?", ("keyword",), token="pve-02.lan"),
    # --- appended later; order matters (qids and the tune/test split), so only append ---
    # more long English facts (kinds derived: long_en, cross_lingual for the Indonesian ones)
    _Q("rina_just_try", "en", "What did my sister say when I told her a recruiter had called me?"),
    _Q("recruiter_call", "id", "Recruiter dari perusahaan fintech itu tahu tentang aku dari mana?"),
    _Q("cat_adopt", "id", "Berapa biaya adopsi kucingku, dan itu sudah termasuk apa aja?"),
    _Q("cat_adopt", "en", "Who came up with my cat's name, and what was it based on?"),
    _Q("cat_first_touch", "id", "Kapan anak kucingku pertama kali keluar dari kardusnya dan nyundul tanganku?"),
    _Q(
        "takehome", "en", "How much time did I put into the fintech's coding assignment, and how long did they give me?"
    ),
    _Q(
        "takehome",
        "id",
        "Di tugas rekrutmen fintech itu, gimana caraku nyocokin tagihan yang dibayar lewat beberapa kali transfer?",
    ),
    _Q("wedding_venue", "en", "Where will my sister's wedding vows be held on the morning before the reception?"),
    _Q("training_pace", "id", "Maraton mana yang aku daftarin buat jadi maraton penuh pertamaku?"),
    _Q("cat_vaccine", "en", "How much did the vet visit for my cat's first vaccination cost?"),
    _Q("cat_vaccine", "id", "Kucingku divaksin pertama kali di klinik mana, sama dokter siapa?"),
    _Q("design_round", "id", "Waktu wawancara desain sistem di perusahaan fintech, aku disuruh merancang layanan apa?"),
    _Q(
        "design_round",
        "en",
        "In the system design interview, what did I say to do when the bank doesn't answer in time?",
    ),
    _Q("shin_injury", "en", "What exercise was I still allowed to do while my sore shin healed?"),
    _Q("shin_injury", "id", "Kata fisioterapis, kenapa tulang keringku bisa sakit?"),
    _Q("job_offer", "id", "Tawaran kerja baru itu lebih besar berapa persen dari gajiku waktu itu?"),
    _Q("job_accept", "en", "How did my manager react when I told him I was leaving for the new job?"),
    _Q("cat_wreck", "id", "Alat kecil yang dijatuhin kucingku dari rak itu sehari-harinya dipakai buat apa?"),
    _Q("cat_wreck", "en", "What did I buy to protect the little board after the cat knocked it off the shelf?"),
    _Q("batik_fitting", "id", "Motif batik seragam keluarga buat nikahan Dewi apa?"),
    _Q("batik_fitting", "en", "How long did the tailor say the family's wedding shirts would take?"),
    _Q("cat_booster", "en", "When did my cat get her follow-up booster shot?"),
    _Q("cat_booster", "id", "Berapa berat kucingku waktu disuntik booster?"),
    _Q("long_run_24", "en", "What did I eat and drink during my longest training run to keep going?"),
    _Q(
        "handover_doc",
        "en",
        "Why does one of the invoice jobs run a few minutes after four instead of exactly at four?",
    ),
    _Q("handover_doc", "id", "Fajar nanya apa aja setelah baca dokumen serah terima yang aku tulis?"),
    _Q("farewell_lunch", "en", "When did my old team take me out for a goodbye lunch?"),
    _Q("farewell_lunch", "id", "Apa kata Mas Yoga waktu pidato di makan siang perpisahanku?"),
    # more cross-lingual questions about the hand-written scenes (kind derived)
    _Q("mudik_ticket", "en", "How much did the three train tickets to Yogyakarta for the Lebaran trip cost?"),
    _Q(
        "boot_order",
        "en",
        "How many seconds did I make the server wait after starting the database VM before starting the app?",
    ),
    _Q("thr_keponakan", "en", "How many nieces and nephews did I prepare holiday money envelopes for?"),
    _Q("kolak", "en", "What did my sister say was the secret to her banana dessert for breaking the fast?"),
    _Q("silaturahmi", "en", "Whose house did we plan to visit first right after the Eid prayer in Jogja?"),
    _Q(
        "rsync_reversed",
        "en",
        "How many files went missing when I ran the sync the wrong way round, and where did I restore them from?",
    ),
    _Q("b2_cost", "en", "Where did I plan to keep the recovery key for the encrypted cloud backup of our photos?"),
    _Q("zigbee_dongle", "en", "Which radio channel did I move the smart home sensor network to, and why?"),
    _Q("zone2_first", "en", "How slow was my pace on the first run where I capped my heart rate?"),
    _Q("porch_light", "en", "When did I make the kitchen speaker announce that it's time to break the fast?"),
    _Q("ups_battery", "id", "Aki pengganti buat UPS di rak aku beli di mana, dan harganya berapa?"),
    _Q("pay3817", "id", "Ada berapa invoice yang kena tagihan ganda gara-gara notifikasi pembayaran dikirim ulang?"),
    _Q("subnet_router", "id", "Kenapa laptop Linux-ku awalnya nggak bisa buka perangkat di rumah lewat VPN mesh?"),
    _Q("exit137", "id", "Kapan pencarian foto pintar di server foto berhenti karena container-nya kehabisan memori?"),
    _Q("bank_script", "id", "Menurut skrip pengelompokan transaksi bank, sebulan aku habis berapa buat kopi?"),
    _Q("pg16_upgrade", "id", "Kenapa query terasa lebih lambat habis naik versi Postgres, dan gimana aku benerinnya?"),
    _Q("second_dns", "id", "Pakai apa aku nyamain daftar blokir dan pengaturan antara dua server Pi-hole?"),
    _Q("book_ban", "id", "Buku apa yang pertama aku masukin ke daftar keinginan waktu aku berhenti beli buku?"),
    _Q("wg51834", "id", "Kapan aku nyambungin router di rumah Mbah di Jogja lewat VPN supaya bisa dibantu dari jauh?"),
    _Q("drop_prisma", "id", "Apa alasan tim mutusin berhenti pakai ORM di aplikasi tagihan?"),
)


# --- assembly --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Topic:
    slots: object  # (rng) -> dict, or (rng, day) -> dict when ``by_day``
    pools: dict[str, tuple[tuple[str, str], ...]]
    windows: str
    agents: tuple[str, ...]
    by_day: bool = False


_TOPICS: dict[str, _Topic] = {
    "proxmox": _Topic(_slots_proxmox, {"id": _PROXMOX_ID, "en": _PROXMOX_EN}, "mae", ("hermes", "zed")),
    "nas": _Topic(_slots_nas, {"id": _NAS_ID, "en": _NAS_EN}, "mae", ("hermes", "zed")),
    "docker": _Topic(_slots_docker, {"id": _DOCKER_ID, "en": _DOCKER_EN}, "ae", ("hermes", "zed")),
    "network": _Topic(_slots_network, {"id": _NETWORK_ID, "en": _NETWORK_EN}, "mae", ("hermes",)),
    "work": _Topic(_slots_work, {"id": _WORK_ID, "en": _WORK_EN}, "ma", ("zed",)),
    "ramadan": _Topic(_slots_ramadan, {"id": _RAMADAN_ID, "en": _RAMADAN_EN}, "me", ("hermes",), by_day=True),
    "family": _Topic(_slots_family, {"id": _FAMILY_ID, "en": _FAMILY_EN}, "ae", ("hermes",)),
    "run": _Topic(_slots_run, {"id": _RUN_ID, "en": _RUN_EN}, "me", ("hermes",)),
    "budget": _Topic(_slots_budget, {"id": _BUDGET_ID, "en": _BUDGET_EN}, "e", ("hermes",)),
    "reading": _Topic(_slots_reading, {"id": _READING_ID, "en": _READING_EN}, "e", ("hermes",)),
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
    topic = _TOPICS[topic_name]
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

    choices = [i for i, (req, _, _) in enumerate(_LIFE_BEATS) if allowed(i, req) and i not in used]
    i = min(choices, key=lambda c: (usage[c], rng.random()))
    used.add(i)
    usage[i] += 1
    _, u, a = _LIFE_BEATS[i]
    slots = _slots_life(rng)
    a_text = _render(a, slots, rng, dt.date.min)
    if rng.random() < 0.35:
        a_text = f"{rng.choice(_LEAD[('en', False)])} {a_text}"
    return _render(u, slots, rng, dt.date.min), a_text


def _long_sessions(day: int, start: dt.date, usage: Counter) -> list[_Session]:
    out: list[_Session] = []
    used: set[int] = set()
    counter = 0
    for s_idx, (window, items) in enumerate(_LONG_DAYS[day]):
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
    names = {sc.name: sc.day for sc in _SCENES if sc.name}
    by_day: dict[tuple[str, int], list[_Session]] = defaultdict(list)
    for sc in _SCENES + _RINA_SCENES:
        by_day[(sc.user, sc.day)].append(_scene_session(sc, names, start))
    beat_usage: Counter[int] = Counter()
    for day in sorted(_LONG_DAYS):
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
    for i, q in enumerate(_QUESTIONS, start=1):
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
    need(len(_LONG_DAYS) >= 15, "fewer than 15 long English days")

    kinds = Counter(k for q in qs for k in q.kinds)
    need(len(qs) >= 48, f"only {len(qs)} questions")
    langs = Counter(q.lang for q in qs)
    need(langs["id"] == langs["en"], f"languages unbalanced: {dict(langs)}")
    for kind, least in (("cross_lingual", 10), ("related_only", 6), ("keyword", 6), ("long_en", 8)):
        need(kinds[kind] >= least, f"{kind}: {kinds[kind]} < {least}")
    need(all(1 <= len(q.answers) <= 2 for q in qs), "a question with no or more than two answers")
    need(sum(len(q.answers) == 1 for q in qs) > 0.9 * len(qs), "too many multi-answer questions")

    gading = {d: t for (u, d), t in day_text.items() if u == "gading"}
    for q, spec in zip(qs, _QUESTIONS, strict=False):
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
    print(f"  gading sessions by source: {dict(src)}; long English days: {len(_LONG_DAYS)}")
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
