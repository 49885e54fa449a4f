"""The cue phrases that mark a decision, an open item or something done, declared once (``transforms.cues`` matches them).

Each table is a tuple of regular-expression fragments, lower case, matched between word boundaries on a
lower-cased sentence whose code spans, URLs and paths are blanked out. Placeholders: ``{me}`` a first-person
pronoun (aku, gue, gw, saya, I...), ``{we}`` "we" or kita, ``{verb}`` any one word, ``{act}`` / ``{act_en}`` a
verb of a step to take (``ACTS``: cek, coba, ganti...; ``ACTS_EN``: check, order, replace...), ``{when}`` a word
between a time word and its promise (``WHEN``: "nanti malem aku tes"), ``{start}`` the start of a sentence.

- ``DECISION``: something settled ("sudah diputuskan", "jadi kita pakai", "we'll go with", "settled on").
  ``PROPOSAL`` decisions count from the user only: a proposal ("let's use") or a choice in passing ("restic
  aja deh", "oke 5 menit"); an assistant's "let's use" walks through an answer, so it is not a decision.
- ``OPEN``, by sort: ``promise`` (someone will do something: "nanti saya cek", "besok aku coba", "I'll look into
  it", "remind me to"), ``todo`` (TODO, FIXME, "masih harus"), ``error`` (a failure still standing: "masih
  error", "belum bisa", "still failing") and ``unresolved`` (a question left open: "belum tahu", "not sure
  yet"). A promise counts only from the user: an assistant's "I'll explain" is part of its answer.
- ``DONE``: something finished or fixed ("sudah beres", "berhasil", "udah jalan", "works now", "solved").
- ``NOT_CUES``: phrases that hold a cue's words but are none ("belum tentu", "let's see", "we'll see", "I'll
  explain"); they are blanked before the cues are looked for.
- ``NEGATORS`` just before a done or decision cue turn it off ("nggak berhasil", "not fixed");
  ``CONDITIONALS`` earlier in the clause turn an open cue off ("kalau masih error"), earlier in the sentence a
  decision or done cue ("kalau masih error, restart aja", "if it still fails");
  ``HEDGES`` earlier in the clause turn a done cue off ("harusnya sudah bisa", "should work now").
- ``GENERIC_WORDS``: words that carry no topic of their own (check, coba, fix, done...): an item and the
  sentence that closes it must share more than these.

Invariant (checked on import): every fragment is stripped, lower case, and compiles once its placeholders are
filled in.
"""

from __future__ import annotations

import re

#: First-person singular pronouns, both languages (the user's own voice).
ME = ("aku", "gue", "gua", "gw", "saya", "ane", "i")
#: First-person plural pronouns.
WE = ("kita", "kami", "we")

#: Words between a time word and its promise: "nanti malem aku tes", "nanti sabtu aku cek", "nanti deh aku cari".
WHEN = (
    "malam",
    "malem",
    "pagi",
    "siang",
    "sore",
    "senin",
    "selasa",
    "rabu",
    "kamis",
    "jumat",
    "sabtu",
    "minggu",
    "deh",
    "aja",
    "ya",
    "dulu",
    "sih",
    "weekend",
)

#: Verbs of a promise or a step still to take ("gue cek dulu", "belum aku cek").
ACTS = tuple(
    """
    cek ngecek coba cobain nyoba tanya tanyain nanya lihat liat liatin periksa pasang install instal ganti beli
    hubungi telepon telpon kabari kabarin kirim bayar update backup tes test ngetes urus urusin benerin perbaiki
    bikin siapin siapkan daftar ukur bawa catat pelajari baca jadwalin pesan pesen booking restart reboot setting
    konfigurasi bersihin hapus pindahin migrasi upgrade downgrade balikin cari cariin
    """.split()
)

#: English verbs of a promise ("I'll check", "I need to order"): not "I'll have a coffee" or "I'll miss you".
ACTS_EN = tuple(
    """
    check look try test fix replace buy order call ring phone ask email send pay update upgrade install set book
    schedule follow contact reach finish review clean move back write run measure swap reboot restart migrate
    figure sort dig investigate debug read report file label reinstall reflash flash configure renew cancel return
    print sign submit prepare plan research compare pick
    """.split()
)

DECISION: tuple[str, ...] = (
    # Indonesian
    r"(sudah|udah|telah|sdh|akhirnya) (di)?putus(kan|in)",
    r"diputuskan",
    r"({me}|{we}) (mutusin|memutuskan|putuskan|putusin)",
    r"keputusan(nya|ku)? ?:",
    r"keputusannya",
    r"(sudah|udah|sdh) (fix|final|deal|sepakat|pasti|setuju)",
    r"(di)?sepakati",
    r"sepakat",
    r"jadi ({me}|{we}) (pakai|pake|pilih|ambil|beli|pesan|pesen|berangkat|ikut|daftar|pindah|ganti)",
    r"(fix|final|pokoknya|oke|ok|oke deh|ya udah|yaudah|ya sudah|yasudah|baiklah|sip),? ?({me}|{we}) "
    r"(pakai|pake|pilih|ambil|beli|pesan|pesen|ikut|jadi|tetap|tetep|pindah|ganti)",
    r"(fix|final) (pakai|pake|pilih|ambil|beli|pesan|pesen|jadi|berangkat|ganti|pindah)",
    r"akhirnya ({me} |{we} )?(pilih|milih|memilih|pakai|pake|ambil|beli|mutusin|pindah|ganti)",
    r"({me}|{we}) (pilih|ambil|pakai|pake|tetap pakai|tetep pake|tetap di|tetep di) (yang|aja|saja)",
    r"(pakai|pake|pilih|ambil|beli) \S+( \S+)? (aja|saja|deh)",
    r"({me}|{we}) (tetap|tetep) (pakai|pake|pilih|di)",
    r"(oke|ok|sip),? deal",
    r"({me}|{we}) setuju",
    # English
    r"(i|we|i've|we've|i have|we have) (decided|chosen|settled)",
    r"decided (to|on|that|against)",
    r"(we'll|we will|i'll|i will|we're|we are|i'm|i am) (go|going|stick|sticking) with",
    r"settled on",
    r"(we|i) (chose|picked|went with|opted for)",
    r"(we'll|we will|i'll|i will) (use|keep|switch to|move to|take)",
    r"(we're|i'm) (switching|moving) to",
    r"(sticking|going) with",
    r"the plan is",
    r"decision:",
    r"agreed",
    r"final answer",
)
#: Decisions that count from the user only: a proposal ("let's use") or a choice in passing, as a reply ("restic
#: aja deh", "oke 5 menit", "pake santan asli"); from the assistant the same words walk through an answer.
PROPOSAL: tuple[str, ...] = (
    r"let's (go with|use|stick with|keep using|pick|switch to)",
    r"yuk (pakai|pake|pilih|ambil)",
    r"kita (pakai|pake|pilih|ambil) (aja|saja|ini|itu|yang)",
    # a choice closing its clause: "restic aja deh", "30% aja biar aman"; a time word there defers (OPEN)
    r"(?!(besok|nanti|ntar|lusa|weekend|kapan|lain|gitu|gini|dulu|situ|sini|singkat|santai|tenang|biasa)\b)\w+ "
    r"(aja|saja)( deh| ya| dulu| lah| sih)?(?=\s*([.,!;]|$|biar |soalnya |karena |sekalian |plus |di ))",
    # a reply that takes an option: "oke 5 menit", "oke aku pecah jadi dua"
    r"{start}(oke|okee|sip|yaudah|ya udah|yasudah),? (?!(nanti|ntar|besok|makasih|thanks|terima|"
    r"udah|sudah|deh|sip|ya|jadi|gitu|gimana|kalau|kalo|noted|paham|ngerti|siap|mantap|aku coba|gue coba|aku cek|"
    r"gue cek|\w+ dulu)\b)[\w%]+",
    r"{start}(pake|pakai|ambil|pilih) (yang )?\w+",
    r"(tetap|tetep) ({me} )?(blok|pakai|pake|pilih|di|ambil)",
)

OPEN: dict[str, tuple[str, ...]] = {
    "promise": (
        # Indonesian: "nanti saya cek", "besok aku coba", "gue cek dulu", "ingetin aku"
        r"(nanti|ntar|entar|nti|besok|lusa|abis ini|habis ini|setelah ini|minggu depan|bulan depan|malam ini|"
        r"sore ini)({when})* ({me}|{we}) ({verb})",
        r"(nanti|ntar|entar|besok|lusa)({when})* ({act}|ke|mau ke|langsung ke|pergi ke)",
        r"(nanti|ntar|entar|besok|lusa)( malam| malem| sore| siang| pagi)( aja| saja| deh)",
        r"(besok|nanti|ntar|lusa|minggu depan|weekend|kapan-kapan) (aja|saja|deh|dulu)",
        r"({act}) (\S+ ){0,3}(dulu )?(weekend ini|akhir pekan ini|minggu ini|besok|lusa|nanti malam|nanti malem)",
        r"({me}|{we}) (akan|mau|bakal|bakalan|harus|perlu|musti|mesti) (cek|ngecek|mengecek|coba|nyoba|mencoba|"
        r"tanya|nanya|tanyain|tanyakan|lihat|liat|periksa|pasang|install|instal|ganti|beli|hubungi|telepon|telpon|"
        r"kabari|kabarin|kirim|bayar|update|backup|tes|test|ngetes|urus|ngurus|benerin|perbaiki|bikin|siapin|"
        r"siapkan|daftar|ukur|bawa|catat|pelajari|baca|jadwalin|jadwalkan|pesan|pesen|booking|konsultasi|ke)",
        r"(akan|mau|bakal|nanti|ntar|besok) ({me}|{we}) ({verb})",
        r"({me}|{we}) ({act}) (dulu|nanti|besok|lagi nanti)",
        r"({me}) kabari(n)?",
        r"({me}|{we}) (pikir-pikir|pikir|pikirin|mikir) dulu",
        r"(ingetin|ingatkan|ingatin|ingatkanlah) ({me}|{we})",
        r"jangan lupa",
        # English
        r"(i'll|i will|i'm going to|i am going to|i'm gonna|i need to|i have to|i've got to|i gotta|i should|"
        r"i must|i plan to|i still need to|i still have to|i'll try to|i'll have to)( also| just| then| first)? "
        r"({act_en})",
        r"(i'll|i will) (let you know|get back to you|report back|keep you posted)",
        r"(we'll|we will|we're going to|we need to|we have to|we should|we still need to) (need to|have to|check|look|try|"
        r"test|revisit|fix|figure|see about|come back|talk|ask|call|order|buy|replace|update|schedule|book|"
        r"finish|sort|deal|investigate|debug|monitor|set up|configure|migrate|move)",
        r"(tomorrow|later|tonight|next week|this weekend|after lunch),? (i|we)('ll| will| need to| have to| should)",
        r"remind (me|us) (to|about|tomorrow|later|next)",
        r"don't forget to",
        r"note to self",
        # a part still to come: "penjualan nyusul" (from the assistant, a draft's wording)
        r"(nyusul|menyusul|nyusul belakangan|belakangan aja)",
    ),
    "todo": (
        r"todo",
        r"to-do",
        r"fixme",
        r"tbd",
        r"masih (harus|perlu|mesti|musti)",
        r"tinggal (ganti|beli|pasang|bayar|cek|tes|test|install|setting|konfigurasi|update|nunggu|tunggu)",
        r"pr(-nya|nya)? (masih|tinggal|buat besok)",
        r"still (need|needs|have|has) to",
        r"left to do",
        r"yet to be (done|fixed|decided|tested)",
        r"(masih|still) pending",
    ),
    "error": (
        r"(masih|tetap|tetep|msh|masi) (aja |saja |juga )?(error|eror|gagal|rusak|mati|bermasalah|lemot|lambat|"
        r"crash|hang|ngehang|nge-hang|bocor|panas|bunyi|sakit|demam|belum|nggak|gak|ga|tidak|tdk|muncul|timeout|"
        r"putus|down|ngelag|lag|corrupt|degraded|failed|fail|offline|penuh|pucat|jelek|merah|muntah|salah|kuning|"
        r"access denied|denied|bengkak|batuk|pilek)",
        r"(gagal|error|eror|crash|mati|hang|ngehang|timeout) terus",
        r"(belum|blm|belom) (bisa|jalan|nyala|konek|connect|beres|selesai|kelar|berhasil|fix|work|jadi|muncul|"
        r"ketemu|nemu|sembuh|sempat|sempet|ada|dapat|dapet|masuk|keluar|turun|normal|stabil|aman|lunas|dibayar|"
        r"terpasang|terinstall|diinstall|dicek|dites|dicoba|diganti|diperbaiki|dibenerin|ke-?\w+)",
        r"(belum|blm|belom) di-?\w{3,}",
        r"(belum|blm|belom) berani",
        r"(belum|blm|belom) (({me}|{we}) )?({act})",
        r"(nggak|gak|ga|tidak|tdk|ngga|enggak) (berhasil|mau (jalan|nyala|konek|boot|start)|nyala|konek|kebaca|"
        r"kedetect|kedeteksi|muncul|bisa (connect|konek|login|akses|diakses|dibuka|boot|mount|start|jalan|nyala|"
        r"ping|resolve|masuk))",
        r"(still|keeps|kept) (failing|fails|failed|broken|erroring|errors|crashing|crashes|down|timing out|"
        r"not working|doesn't work|does not work|throws|throwing|getting|showing|shows|"
        r"returns|returning|hangs|hanging|stuck|slow|degraded|offline|corrupt|missing|leaking|giving)",
        r"still (can't|cannot|won't|doesn't|does not) (connect|boot|start|load|mount|login|log in|reach|access|find|"
        r"open|run|ping|resolve|build|compile|work)",
        r"(doesn't|does not|isn't|is not|don't|do not|won't|can't) (work|working|boot|start|run|load|connect|"
        r"build|compile|mount)( \w+)? yet",
        r"(not|isn't|is not|aren't) (working|fixed|solved|resolved|done|finished|there) yet",
        r"no (fix|solution|luck) yet",
        r"(haven't|have not|hasn't|has not) (been )?(fixed|solved|resolved|found|figured|managed)",
        r"(still|yet) unresolved",
    ),
    "unresolved": (
        r"(belum|blm|belom|masih nggak|masih gak|masih ga) (tahu|tau|yakin|pasti|kepikiran|paham|ngerti|"
        r"mutusin|memutuskan|diputuskan|ada keputusan|nemu jawaban|jelas)",
        r"masih (bingung|ragu|mikir|pikir-pikir|menimbang|nimbang|galau|belum jelas)",
        r"(nanti|ntar) (di)?pikir(in|kan)",
        r"(not sure|unsure|undecided|no idea|don't know|do not know|haven't decided|have not decided|not decided|"
        r"still deciding|still thinking|can't decide|cannot decide)( \w+)?( \w+)? yet",
        r"(haven't|have not|still haven't) (decided|figured out|made up)",
        r"(still|yet) (unclear|undecided|unsure|open question|to be decided)",
        r"open question",
        r"(i'm|i am|we're|we are) still (not sure|unsure|deciding|thinking|torn|undecided)",
    ),
}

DONE: tuple[str, ...] = (
    # Indonesian
    r"(sudah|udah|sdh|udh|dah|telah) (aja |juga |ku |{me} )?(beres|selesai|kelar|jalan|bisa|jadi|normal|aman|"
    r"fix|fixed|berhasil|sukses|nyala|konek|connect|lancar|stabil|sembuh|lunas|ok|oke|work|works|done|masuk|"
    r"muncul|kebaca|terbaca|kedetect|ketemu|nemu|up|online|hijau|benar|bener|diperbaiki|dibenerin|diganti|"
    r"dipasang|diinstall|diinstal|dibayar|dikirim|dicek|dites|dicoba|diupdate|diperbarui|dikonfigurasi|disetting|"
    r"diatur|dihapus|dibackup|dipesan|dibeli|diselesaikan|dijadwalkan|ditambahkan|diterapkan|teratasi)",
    r"(sudah|udah|sdh|dah) ({me}|{we}) (cek|ganti|pasang|install|instal|bayar|kirim|beli|perbaiki|benerin|"
    r"update|backup|tes|test|coba|hubungi|telepon|telpon|pesan|pesen|selesaikan|beresin|urus)",
    r"beres",
    r"berhasil",
    r"sukses",
    r"teratasi",
    r"terselesaikan",
    r"akhirnya (bisa|jalan|nyala|konek|jadi|berhasil|beres|normal|sembuh)",
    r"sekarang (sudah |udah |dah )?(bisa|jalan|normal|lancar|stabil|aman|nyala|konek|kenceng|cepat)",
    r"bisa (\w+ )?(sekarang|lagi)",
    r"(nah|akhirnya|alhamdulillah|yes|wah|eh) bisa",
    r"(udah |sudah |juga )?(kebuka|nyambung)",
    r"(lancar|aman|normal) (lagi|sekarang|kembali)",
    r"(masalah|error|eror)(nya)? (sudah |udah |dah )?(hilang|ilang|beres|teratasi|selesai)",
    r"(nggak|gak|ga|tidak|udah nggak|udah gak|udah ga) (error|eror|gagal) lagi",
    # English
    r"(works|working|runs|running|boots|loads|passes|passing|connects) (now|again|fine now|perfectly now)",
    r"(it|that|this|everything) (works|worked)",
    r"(fixed|solved|resolved|sorted out|figured it out|figured out)",
    r"(is|are|'s|'re) (done|finished|complete|completed|back up|back online|up and running)",
    r"(all|it's all|we're all) (good|set) now",
    r"that did (it|the trick)",
    r"up and running",
    r"no more( \w+)? (errors|error|crashes|failures|warnings|timeouts)",
    r"(i|we) (finished|completed|replaced|installed|paid|ordered|bought|booked|sent|updated|migrated|restored)",
    r"(i|we)('ve| have) (finished|completed|replaced|installed|paid|ordered|bought|booked|sent|updated|migrated|"
    r"restored|done|fixed|solved)",
    r"{start}done",
    r"(all|i'm|we're|i am|we are) done",
)

NOT_CUES: tuple[str, ...] = (
    r"belum tentu",
    r"belum pernah",
    r"belum lama",
    r"belum waktunya",
    r"(sudah|udah|sdh) belum",
    r"(sudah|udah|sdh) (\S+ )?(atau|apa) belum",
    r"(ga|gak|nggak|tidak) apa-apa",
    r"let's see",
    r"we'll see",
    r"let's take a look",
    r"let's look at",
    r"let me",
    r"lemme",
    r"(i'll|i will) (explain|show|walk|break|help|go through|outline|cover|describe|summarize|list|give|start|"
    r"leave|let you know how|be honest|admit)",
    r"(saya|aku|gue) (jelaskan|jelasin|bantu|tunjukkan|tunjukin|rangkum|uraikan)",
    r"done right",
    r"fixed (ip|address|price|rate|size|width|height|point|income|cost|term|schedule|set|number|amount|version)",
    r"(fix|final) (harga|price)",
    r"well done",
    r"done with (it|that)\?",
    r"jadi gini",
    r"jadi begini",
)

NEGATORS = (
    "belum",
    "blm",
    "belom",
    "nggak",
    "ngga",
    "gak",
    "ga",
    "enggak",
    "engga",
    "tidak",
    "tdk",
    "tak",
    "not",
    "n't",
    "never",
    "no",
    "bukan",
    "isn't",
    "wasn't",
    "hasn't",
    "haven't",
    "never",
    "nothing",
)
CONDITIONALS = (
    "kalau",
    "kalo",
    "klo",
    "kl",
    "jika",
    "jikalau",
    "apabila",
    "bila",
    "seandainya",
    "andaikan",
    "misal",
    "misalnya",
    "asal",
    "asalkan",
    "if",
    "unless",
    "once",
    "whether",
    "when",
    "in case",
    "assuming",
    "supaya",
    "agar",
    "biar",
    "so that",
    "until",
    "sampai",
    "sampe",
    "hingga",
    "sebelum",
    "before",
    "after",
    "setelah",
)
HEDGES = (
    "we'll",
    "i'll",
    "you'll",
    "it'll",
    "gonna",
    "harusnya",
    "seharusnya",
    "mestinya",
    "semestinya",
    "mungkin",
    "moga",
    "semoga",
    "kayaknya",
    "sepertinya",
    "should",
    "might",
    "may",
    "probably",
    "hopefully",
    "maybe",
    "would",
    "could",
    "will",
    "akan",
    "bakal",
)

#: Words too general to tie a later sentence to an item: actions any item has ("check", "coba"), done words.
GENERIC_WORDS: frozenset[str] = frozenset(
    """
    cek ngecek mengecek dicek check checked checking coba nyoba mencoba dicoba try tried trying tes test tested
    testing dites fix fixed fixing beres selesai kelar done finish finished berhasil sukses solved resolved work
    works working worked jalan bisa lagi nanti besok tomorrow later today hari ini still masih belum yet now
    sekarang error eror gagal fail failed failing lihat liat look looked see asisten assistant will akan udah
    sudah already again tadi thing things hal sesuatu something it itu ini ll ve re don didn doesn isn
    """.split()
)


def _fill(fragment: str) -> str:
    return (
        fragment.replace("{me}", "(?:" + "|".join(ME) + ")")
        .replace("{we}", "(?:" + "|".join(WE) + ")")
        .replace("{verb}", r"[a-z][\w'-]*")
        .replace("{act_en}", "(?:" + "|".join(ACTS_EN) + ")")
        .replace("{when}", " (?:" + "|".join(WHEN) + ")")
        .replace("{start}", r"(?:^|(?<=[.!?] )|(?<=\n))")
        .replace("{act}", "(?:" + "|".join(ACTS) + ")")
    )


def _check(tables: dict[str, tuple[str, ...]]) -> None:
    for name, fragments in tables.items():
        for f in fragments:
            bare = re.sub(r"\\.", "", f)  # \S, \w: escapes may be upper case
            if not f or f != f.strip() or bare != bare.lower():
                raise ValueError(f"schemas/cues.py {name}: {f!r} must be stripped and lower case")
            try:
                re.compile(_fill(f))
            except re.error as e:
                raise ValueError(f"schemas/cues.py {name}: {f!r} is not a regular expression ({e})") from e


#: A fragment with its placeholders filled in: what ``transforms.cues`` compiles.
fill = _fill

_check(
    {"DECISION": DECISION, "PROPOSAL": PROPOSAL, "DONE": DONE, "NOT_CUES": NOT_CUES}
    | {f"OPEN.{k}": v for k, v in OPEN.items()}
)
