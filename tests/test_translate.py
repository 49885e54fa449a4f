"""A recall query glossed into the other language: the word list, the language, the gloss both ways."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pytest

from schemas.lexicon import BILINGUAL, _bilingual
from transforms import translate


def test_the_word_list_is_well_formed_and_large():
    assert len(BILINGUAL) > 2000
    assert BILINGUAL["kapan"] == ("when",) and "injury" in BILINGUAL["cedera"]
    for word, glosses in BILINGUAL.items():
        assert word == word.lower() and " " not in word and glosses and all(g == g.lower() for g in glosses)


def test_a_bad_word_list_line_fails_on_load_with_its_line(tmp_path, monkeypatch):
    import schemas.lexicon as lexicon

    class Fake:
        def __init__(self, text):
            self.text = text

        def joinpath(self, *parts):
            return self

        def read_text(self, encoding):
            return self.text

    for text, why in (("kaki leg\n", "expected"), ("kaki\tleg\nkaki\tfoot\n", "twice"), ("Kaki\tleg\n", "expected")):
        monkeypatch.setattr(lexicon, "files", lambda package, t=text: Fake(t))
        with pytest.raises(ValueError, match=why):
            _bilingual("x.tsv")


@pytest.mark.parametrize(
    "text, lang",
    [
        ("Kapan aku ganti aki UPS yang bunyi terus?", "id"),
        ("When did I replace the UPS battery?", "en"),
        ("UPS", None),  # no function word either way
    ],
)
def test_the_language_of_a_query(text, lang):
    assert translate.language(text) == lang


def test_an_indonesian_query_is_glossed_into_english_word_by_word():
    got = translate.gloss("Kapan kakiku cedera dan disuruh libur lari?")
    assert got is not None
    words = got.split()
    assert words[0] == "when" and "injury" in words and "run" in words
    assert "kakiku" not in words and ("foot" in words or "leg" in words)  # -ku taken off before the lookup
    assert "dan" not in words  # a function word with no entry is dropped


def test_unknown_words_are_kept_as_written_names_and_loan_words():
    got = translate.gloss("Kapan aku deploy Immich di pve-02?")
    assert "immich" in got.split() and "pve-02" in got.split() and "when" in got.split()


def test_an_english_query_is_glossed_into_indonesian_by_its_longest_phrases():
    got = translate.gloss("When did I split the bill for the fast-breaking dinner?")
    assert got is not None
    words = got.split()
    assert "patungan" in words  # "split the bill", three words, before "split" alone
    assert "bukber" in words  # "fast-breaking dinner"
    assert "when" not in words and "kapan" not in words  # a function word is not glossed


def test_nothing_to_gloss_is_none():
    assert translate.gloss("UPS") is None  # no language
    assert translate.gloss("the and of") is None  # English, but nothing in the list
    assert translate.gloss("") is None


def test_a_search_keeps_each_chunk_s_own_and_glossed_scores_weighed_by_hand(monkeypatch):
    from types import SimpleNamespace

    from flows.query.recall import Recaller
    from transforms.recall import KeywordIndex, RecallParams

    r = Recaller.__new__(Recaller)
    r.params = replace(RecallParams(), gloss_weight=0.75, gloss_fusion="mean")
    r.embedder = None
    r._data = SimpleNamespace(keyword=KeywordIndex.from_lists([["run"], ["lari"], ["km"]], [[1], [1], [1]]))
    own, glossed = np.array([0.9, 0.2, 0.0]), np.array([0.1, 1.0, 0.4])
    monkeypatch.setattr(Recaller, "_cosines", lambda self, texts, mode, also=None, vectors=None: None)
    monkeypatch.setattr(
        Recaller, "_fused", lambda self, q, cos, mode, kw=None: own if q.startswith("Kapan") else glossed
    )
    got = r.scores("Kapan aku lari 24 km?")
    assert got.tolist() == pytest.approx([(0.9 + 0.075) / 1.75, (0.2 + 0.75) / 1.75, 0.3 / 1.75])
    r.params = replace(r.params, gloss_fusion="max")
    assert r.scores("Kapan aku lari 24 km?").tolist() == pytest.approx([0.9, 0.75, 0.3])
    r._data = SimpleNamespace(keyword=KeywordIndex.from_lists([["lari"], ["km"]], [[1], [1]]))
    assert r.scores("Kapan aku lari 24 km?").tolist() == own.tolist()  # no chunk holds a word the gloss brings
    r._data = SimpleNamespace(keyword=KeywordIndex.from_lists([["run"], ["lari"], ["km"]], [[1], [1], [1]]))
    r.params = replace(r.params, gloss_weight=0.0)  # off: the query's own scores
    assert r.scores("Kapan aku lari 24 km?").tolist() == own.tolist()


def test_an_english_word_takes_the_indonesian_words_whose_first_meaning_it_is_first():
    assert translate.gloss("When did I pay the rent?").split()[:2] == ["bayar", "membayar"]  # not gaji (salary)
    assert "mbak" not in translate.gloss("When did I miss the bus?").split()  # "miss" is kangen, not the title


def test_a_search_finds_the_other_language_s_day_through_the_gloss_and_keeps_an_exact_match(home):
    from helpers import NOW, drop, md

    from flows.pipeline import nightly
    from flows.query.recall import Recaller

    drop(
        home,
        "2026-07-17-0900.md",
        md(
            "2026-07-17",
            "0900",
            ("user", "Kakiku cedera waktu lari pagi, betis sakit."),
            ("assistant", "Istirahat dulu."),
        ),
    )
    drop(
        home,
        "2026-07-18-0900.md",
        md("2026-07-18", "0900", ("user", "Paid the rent to Pak Joko today."), ("assistant", "Noted.")),
    )
    drop(
        home, "2026-07-19-0900.md", md("2026-07-19", "0900", ("user", "Backup NAS jalan lagi."), ("assistant", "Oke."))
    )
    nightly(now=NOW, home=str(home.paths.home))
    r = Recaller(home, "default", embedder=None)
    asked = "When did I hurt my leg while running?"  # English; the day is Indonesian
    assert [h.date for h in r.search(asked, mode="keyword")][:1] == [dt.date(2026, 7, 17)]
    # Either way alone finds it: the query's gloss meets the day's words, and the query meets the day's gloss.
    for off in ({"gloss_weight": 0.0}, {"gloss_terms": False}):
        one_way = r.with_params(replace(r.params, **off))
        assert [h.date for h in one_way.search(asked, mode="keyword")][:1] == [dt.date(2026, 7, 17)]
    neither = r.with_params(replace(r.params, gloss_weight=0.0, gloss_terms=False))
    assert dt.date(2026, 7, 17) not in [h.date for h in neither.search(asked, mode="keyword")]
    # An exact same-language match stays first.
    assert [h.date for h in r.search("When did I pay the rent to Pak Joko?", mode="keyword")][:1] == [
        dt.date(2026, 7, 18)
    ]


@pytest.mark.parametrize(
    "word, base",
    [
        ("dijatuhin", "jatuh"),  # di- ... -in (Jakarta's -kan)
        ("disuntik", "suntik"),
        ("perpisahanku", "pisah"),  # per- ... -an, then -ku
        ("pengganti", "ganti"),  # peng- before a consonant is dropped
        ("sehari-harinya", "hari"),  # a reduplication: the base its two halves share
        ("kepergiannya", "pergi"),  # ke- ... -an, then -nya
        ("ditulis", "tulis"),
    ],
)
def test_an_indonesian_word_the_list_lacks_is_glossed_by_its_base(word, base):
    assert word not in BILINGUAL and base in BILINGUAL
    assert base in translate.base_words(word)
    assert translate._indonesian(word) == BILINGUAL[base]


@pytest.mark.parametrize(
    "word, base",
    [
        ("memulihkan", "pulih"),
        ("menulis", "tulis"),  # meN- before a vowel stands for p, t: restored, never bare
        ("menyimpan", "simpan"),
        ("nyuci", "cuci"),  # meny-/ny- stand for s or c
        ("mengambil", "ambil"),
        ("mengirim", "kirim"),  # meng- is k or nothing
        ("ngerjain", "kerja"),
        ("membeli", "beli"),
    ],
)
def test_prefixes_are_cut_with_the_nasal_s_letter_restored(word, base):
    assert base in translate.base_words(word)


def test_names_function_words_and_short_stems_are_not_glossed_by_a_wrong_base():
    assert translate.base_words("nas-gudang") == ["nas-gudang"]  # a hyphenated name is not two words
    assert "nas-gudang" in translate.gloss("Kapan nas-gudang mati?").split()
    assert translate._indonesian("selama") is None and translate._indonesian("sebuah") is None  # function words
    assert "urut" not in translate.base_words("menurut")  # men- before a vowel is t-, never bare
    assert translate._indonesian("ngrok") is None and translate._indonesian("desain") is None
    assert translate.base_words("pernikahan")[0] == "pernikahan"  # the word as written is tried first
    assert translate._indonesian("pernikahan") == BILINGUAL["pernikahan"]  # a listed form keeps its own meaning


@pytest.mark.parametrize(
    "word, first_base",
    [
        ("noted", "note"),
        ("files", "file"),
        ("watches", "watch"),
        ("parties", "party"),
        ("tried", "try"),
        ("stopped", "stoppe"),
        ("crashed", "crashe"),
    ],
)
def test_an_english_word_s_bases_come_most_likely_first(word, first_base):
    bases = translate.english_bases(word)
    assert bases[0] == word and bases[1] == first_base
    assert translate.english_bases("feed") == ["feed"] and translate.english_bases("focus") == ["focus"]


def test_affixed_and_inflected_words_are_glossed_both_ways_by_their_bases():
    assert "disuntik" not in BILINGUAL and "injection" in translate.gloss("Kapan kucingku disuntik?").split()
    reverse = translate._reverse()
    assert "crashed" not in reverse and "weddings" not in reverse
    glossed = translate.gloss("When the server crashed before the weddings").split()
    assert {"nabrak", "kecelakaan"} & set(glossed) and {"nikahan", "pernikahan"} & set(glossed)
