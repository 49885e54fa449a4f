"""How much text the redactor takes that is no secret: every redacted span, by rule, with its context.

Runs ``transforms.redact.redact`` over each message of the demo corpus
(``flows.cli.demo_corpus``, whose planted fake secrets are the only secrets in it) and
of the shared sample exports (``--samples``, default ``/work/shared/samples``: real chat
files from public repositories, see their SOURCES.md) and of kenang's own README and
docs (prose about tokens and passwords, holding none), and prints, per rule (the
marker's kind), how many spans and words it redacted, then each span in its context
so a person can judge which were no secret. A span of the demo that is one of its
planted fake secrets (``FAKE_*`` in ``flows.cli.demo_corpus``) is marked ``planted``.

    .venv/bin/python benchmarks/redaction_fp.py [--samples DIR] [--quiet] [--time]

``--time`` also prints what redaction and the injection check cost on these texts: the
CPU microseconds a text of ``redact`` and of ``transforms.injection.flag_injection``, the
best of three passes over each corpus (its distinct texts only, so that no cache of
anyone's makes a repeated text look cheap).

To compare with another version of the redactor, run this script with that version's
checkout first on ``PYTHONPATH`` (``PYTHONPATH=../main .venv/bin/python
benchmarks/redaction_fp.py``): it uses only ``redact``, the parsers and the demo corpus.

Invariants: reads files, writes nothing; deterministic (the demo corpus is seeded), but for
``--time``'s figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after a PYTHONPATH that names another checkout

from flows.cli.demo_corpus import FAKE_GITHUB_TOKEN, FAKE_PASSWORD_LINE, FAKE_PRIVATE_KEY, demo_corpus  # noqa: E402
from transforms.errors import ParseError  # noqa: E402
from transforms.imports import detect, parse_export  # noqa: E402
from transforms.injection import flag_injection  # noqa: E402
from transforms.parse import parse_transcript  # noqa: E402
from transforms.redact import redact  # noqa: E402

JAKARTA = dt.timezone(dt.timedelta(hours=7))
MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")
CONTEXT = 40


def texts_of(name: str, data: bytes) -> list[str]:
    """The message texts kenang would redact in one file (an export's messages, a transcript's), else its lines."""
    fmt = detect(data)
    try:
        if fmt is not None:
            export = parse_export(data, fmt=fmt, tz=JAKARTA, default_ts=dt.datetime(2026, 7, 19, tzinfo=JAKARTA))
            return [m.content for c in export.conversations for m in c.messages]
        return [m.content for m in parse_transcript(name, data, tz=JAKARTA).messages]
    except ParseError:
        return data.decode("utf-8", "replace").splitlines()


def spans(text: str) -> list[tuple[str, str, str]]:
    """(kind, the original text a marker replaced, its context) for each marker ``redact`` wrote in ``text``.

    The redactor keeps everything but what it replaces, so the text between markers is
    found again in the original, in order: what lies between is what each marker took.
    """
    out = redact(text).text
    if out == text:
        return []
    kinds = MARKER.findall(out)
    kept = MARKER.split(out)[::2]
    aligned = re.fullmatch("(.+?)".join(re.escape(k) for k in kept), text, re.DOTALL)
    if aligned is None:  # never expected: a marker replaced nothing
        return [(kind, "?", "?") for kind in kinds]
    found = []
    for i, kind in enumerate(kinds, start=1):
        a0, a1 = aligned.span(i)
        before = text[max(0, a0 - CONTEXT) : a0].replace("\n", "⏎")
        after = text[a1 : a1 + CONTEXT].replace("\n", "⏎")
        found.append((kind, text[a0:a1], f"…{before}⟦{text[a0:a1].replace(chr(10), '⏎')}⟧{after}…"))
    return found


def planted_secrets() -> list[str]:
    """The demo corpus's fake secrets (``flows.cli.demo_corpus``'s ``FAKE_*`` constants)."""
    return [FAKE_PASSWORD_LINE.split(": ", 1)[1], FAKE_GITHUB_TOKEN, FAKE_PRIVATE_KEY]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=Path, default=Path("/work/shared/samples"))
    parser.add_argument("--quiet", action="store_true", help="the counts only, not each span")
    parser.add_argument(
        "--time", action="store_true", help="also the CPU time a text of redaction and the injection check"
    )
    args = parser.parse_args()

    corpora: dict[str, list[tuple[str, str]]] = {"demo": [], "samples": [], "docs": []}
    for f in demo_corpus(end_day=dt.date(2026, 7, 19), tz=JAKARTA):
        if f.symlink_to is None:
            corpora["demo"] += [(f.relpath, t) for t in texts_of(f.relpath, f.data)]
    if args.samples.is_dir():
        for path in sorted(args.samples.rglob("*")):
            if path.is_file() and path.name != "SOURCES.md":
                corpora["samples"] += [(path.name, t) for t in texts_of(path.name, path.read_bytes())]

    # kenang's own docs: prose that talks about tokens, keys and passwords all along, and holds none
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        corpora["docs"] += [(path.name, t) for t in path.read_text(encoding="utf-8").split("\n\n")]
    planted = planted_secrets()
    for corpus, items in corpora.items():
        words = sum(len(t.split()) for _, t in items)
        by_kind: Counter[str] = Counter()
        words_by_kind: Counter[str] = Counter()
        shown: dict[str, list[str]] = defaultdict(list)
        for name, text in items:
            for kind, original, context in spans(text):
                by_kind[kind] += 1
                words_by_kind[kind] += max(1, len(original.split()))
                tag = " planted" if corpus == "demo" and any(p in original for p in planted) else ""
                shown[kind].append(f"    {name}{tag}: {context}")
        print(
            f"{corpus}: {len(items)} texts, {words} words; {sum(by_kind.values())} spans redacted, "
            f"{sum(words_by_kind.values())} words"
        )
        for kind in sorted(by_kind):
            print(f"  {kind}: {by_kind[kind]} span(s), {words_by_kind[kind]} word(s)")
            if not args.quiet:
                print("\n".join(shown[kind]))
        if args.time:
            print(timing([t for _, t in items]))


def timing(texts: list[str]) -> str:
    """CPU microseconds a text of ``redact`` and of ``flag_injection``, best of three, over the distinct texts."""
    distinct = list(dict.fromkeys(texts))
    line = f"  time over {len(distinct)} distinct texts ({sum(map(len, distinct))} characters), best of 3:"
    for name, fn in (("redact", redact), ("flag_injection", flag_injection)):
        best = min(_cpu(fn, distinct) for _ in range(3))
        line += f" {name} {best / max(1, len(distinct)) * 1e6:.1f} us"
    return line


def _cpu(fn, texts: list[str]) -> float:
    t0 = time.process_time()
    for t in texts:
        fn(t)
    return time.process_time() - t0


if __name__ == "__main__":
    main()
