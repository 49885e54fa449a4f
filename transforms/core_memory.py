"""Core memory: two small plain-text files an agent reads at the start of every session.

``MEMORY.md`` holds the agent's notes (facts about the environment, conventions,
lessons), at most ``MEMORY_CHARS`` characters; ``USER.md`` is the person's profile
(preferences, style, expectations), at most ``USER_CHARS``. Entries are separated by a
line holding only ``§``; an entry may span lines. The pattern is the Hermes agent's.

The rules run on every write, whatever its path (CLI, MCP, the nightly run), and a
refused write changes nothing and says why and what to do (``Refused``):

- no credential, token, key, password or wallet mnemonic (the redaction detectors);
- nothing that reads like a prompt override (the injection flags), and no standing order
  aimed at an assistant (``transforms.standing_orders``): markup posing as a system or
  tool message, a command to run, a secret to send or show, an address to send to, an
  order to act, or an order tied to "always/never/next time/selalu/lain kali/kalau
  ditanya ...". A fact about the person passes ("Gading always uses tabs");
- nothing that looks like a credential the redactor missed (a value after "password",
  "PIN", "kata sandi", ...);
- no task state ("belum push commit abc123", "deploy hari Senin", "TODO ..."): a
  memory holds what stays true, not what is to be done;
- no control character but the line break and the tab (a bell, a carriage return, an
  escape sequence: C0, DEL and C1), which would act on the terminal or prompt showing it;
- no entry longer than ``ENTRY_CHARS``, no exact or near duplicate of another entry,
  no more than ``max_notes`` entries, and never over the file's character limit (a
  replace is bound by it too).

Characters are counted as Python counts them: code points, so "é" and "😀" are one each.
A file edited by hand is read as it is: problems (over its limit, an entry the rules
refuse) are reported by ``problems`` and never fixed silently, and a write that would
keep a file over its limit is refused with the current usage. What an agent is served
of it (``serve``) passes the same rules: each entry redacted and cut to ``ENTRY_CHARS``,
an entry that reads as an order or a credential withheld, the file cut to its limit, and
a note saying what was trimmed. A file over ``FILE_BYTES`` is not read at all.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from transforms.injection import flag_injection
from transforms.redact import redact
from transforms.standing_orders import credential_like, standing_order, what

SEPARATOR = "§"
MEMORY_CHARS = 2200
USER_CHARS = 1375
ENTRY_CHARS = 500
# A file larger than this is not read (a hand edit gone wrong, or not a memory file): ten times the larger limit,
# at four bytes a character.
FILE_BYTES = 10 * MEMORY_CHARS * 4
TARGETS = {"memory": ("MEMORY.md", MEMORY_CHARS), "user": ("USER.md", USER_CHARS)}
_NEAR = 0.8  # word-set Jaccard at or above which two entries say the same thing

# Task state: what is to be done, or was done once, is not memory.
_TASK_STATE = re.compile(
    r"(?i)(?:^|\W)(?:todo|to-do|fixme|belum\s+(?:push|commit|deploy|merge|selesai|dikerjakan|dibayar|dikirim)|"
    r"(?:jangan\s+lupa|don'?t\s+forget|remember\s+to|ingat(?:kan)?\s+(?:aku\s+)?(?:untuk|buat))\b|"
    r"commit\s+[0-9a-f]{7,40}\b|pr\s*#\d+|(?:deadline|tenggat)\s+\S+)"
)
# ... and so is one thing scheduled once ("deploy kenang hari Senin", "push the fix tomorrow"),
_SCHEDULED = re.compile(
    r"(?i)(?:^|\W)(?:deploy|push|merge|release|rilis|kirim|bayar)\w*(?:\s+[^\s.;,]+){0,4}?\s+"
    r"(?:hari\s+ini|besok|nanti|lusa|tomorrow|today|tonight|(?:hari\s+)?(?:senin|selasa|rabu|kamis|jumat|sabtu|minggu)|"
    r"on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
)
# ... unless it is a habit ("deploy tiap hari Senin", "releases go out every Friday"): a convention is memory.
# Control characters (C0, DEL, C1) but the line break and the tab: a bell, a carriage return or an escape
# sequence in a note would act on the terminal or the prompt that shows it, not be read.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_HABIT = re.compile(r"(?i)\b(?:tiap|setiap|every|each|always|selalu|biasanya|usually)\b")


@dataclass(frozen=True)
class Usage:
    chars: int
    limit: int
    entries: int

    @property
    def percent(self) -> int:
        return round(100 * self.chars / self.limit) if self.limit else 0

    def header(self, name: str) -> str:
        """``MEMORY [67% — 1,474/2,200 chars]``."""
        return f"{name} [{self.percent}% — {self.chars:,}/{self.limit:,} chars]"


class Refused(ValueError):
    """A write the rules refuse; ``hint`` says what to do instead, ``kind`` names the rule. Nothing was changed."""

    def __init__(self, reason: str, hint: str, kind: str = "rule") -> None:
        super().__init__(f"{reason}. {hint}")
        self.reason = reason
        self.hint = hint
        self.kind = kind


ORDER_HINT = (
    "Core memory holds what is true of the person and their setup, never orders to an assistant: write it "
    "as a fact or a preference ('Prefers answers in Indonesian', 'Gading always uses tabs')"
)


def parse(text: str) -> list[str]:
    """The entries of a file: blocks between lines holding only ``§``, trimmed; empty ones dropped."""
    entries: list[str] = []
    block: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == SEPARATOR:
            entries.append("\n".join(block).strip())
            block = []
        else:
            block.append(line)
    entries.append("\n".join(block).strip())
    return [e for e in entries if e]


def render(entries: list[str]) -> str:
    return (f"\n{SEPARATOR}\n".join(entries) + "\n") if entries else ""


def usage(entries: list[str], limit: int) -> Usage:
    return Usage(len(render(entries).rstrip("\n")), limit, len(entries))


def entry_hash(entry: str | None) -> str | None:
    """What the event log records of an entry: its sha256, never its text."""
    return None if entry is None else hashlib.sha256(entry.encode("utf-8", "surrogatepass")).hexdigest()


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def _same(a: str, b: str) -> bool:
    if a.strip().lower() == b.strip().lower():
        return True
    wa, wb = _words(a), _words(b)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= _NEAR


def entry_text(text: str) -> str:
    """A note as an entry holds it: stripped, with Unix line ends (what ``check_entry`` checks and returns)."""
    return text.strip().replace("\r\n", "\n")


def check_entry(text: str) -> str:
    """The entry (``entry_text``) if the content rules allow it; else ``Refused``."""
    entry = entry_text(text)
    if not entry:
        raise Refused("the note is empty", "Write what should be remembered", "empty")
    if any(line.strip() == SEPARATOR for line in entry.split("\n")):
        raise Refused(
            "a line holding only '§' separates entries", "Write it as one entry, or add two entries", "separator"
        )
    if control := _CONTROL.search(entry):
        raise Refused(
            f"the note holds a control character (U+{ord(control.group()):04X})",
            "Write it as plain text: a note may hold line breaks and tabs, but no other control character",
            "control",
        )
    if len(entry) > ENTRY_CHARS:
        raise Refused(
            f"the note is {len(entry)} characters, over the {ENTRY_CHARS} an entry may hold",
            "Keep what stays true in one or two sentences; long pastes belong in the chats, not in memory",
            "too_long",
        )
    found = redact(entry)
    if found.count:
        raise Refused(f"the note holds a secret ({', '.join(found.kinds)})", _SECRET_HINT, "secret")
    unsafe = _unsafe(entry)
    if unsafe is not None:
        raise unsafe
    if _TASK_STATE.search(entry) or (_SCHEDULED.search(entry) and not _HABIT.search(entry)):
        raise Refused(
            "the note is task state (something to do, or done once)",
            "Keep it in a to-do list; memory holds what stays true (preferences, facts, conventions)",
            "task_state",
        )
    return entry


_SECRET_HINT = (
    "Never store credentials in memory; note where the secret lives instead (e.g. 'the NAS password is in "
    "the password manager')"
)


def _unsafe(entry: str) -> Refused | None:
    """Why an entry must never reach an agent's prompt (a prompt override, a standing order, a credential), or None."""
    flags = [f for f in flag_injection(entry) if f != "long_paste"]
    if flags:
        return Refused(
            f"the note reads like an instruction to an assistant ({', '.join(flags)})",
            "Write it as a fact or a preference about the person, not as a prompt",
            "injection",
        )
    order = standing_order(entry)
    if order is not None:
        return Refused(order.reason, ORDER_HINT, order.kind)
    cred = credential_like(entry)
    if cred is not None:
        return Refused(cred.reason, _SECRET_HINT, cred.kind)
    return None


@dataclass(frozen=True)
class Served:
    """What an agent is served of one file: its entries made safe, and a note when anything was trimmed."""

    entries: list[str]
    withheld: int  # entries left out because they read as an order, an override or a credential
    cut: int  # entries cut to ENTRY_CHARS
    over: int  # entries left out past the file's limit

    @property
    def note(self) -> str | None:
        parts = [
            f"{n} note{'s' if n != 1 else ''} {what}"
            for n, what in (
                (self.withheld, "withheld (read as orders to an assistant or held a secret)"),
                (self.cut, f"cut to {ENTRY_CHARS} characters"),
                (self.over, "left out past the file's character limit"),
            )
            if n
        ]
        return ("(trimmed by kenang: " + "; ".join(parts) + "; `kenang memory show` lists them)") if parts else None


def _redacted(entry: str) -> str:
    """A hand-edited entry redacted, without its control characters (they never reach an agent).

    Redacted as written first: a control character bounds a token as a space does, and taking it out first would
    glue the word before it onto the secret ("key\x1bsk-ant-..."), which no rule would then find. Then again once
    they are out, for a secret a control character had cut in two."""
    return redact(_CONTROL.sub("", redact(entry).text)).text


def safe_entry(entry: str) -> tuple[str | None, str | None]:
    """(the entry as it may be served: redacted and cut, or None; why it is withheld, or None).

    The why never quotes the entry: it reaches agents (the MCP memory tool's answer), and an order's own words are
    what is withheld. ``problems`` quotes them, for the person."""
    return _served(_redacted(entry))


def _served(text: str) -> tuple[str | None, str | None]:
    """``safe_entry`` of an entry already ``_redacted``."""
    unsafe = _unsafe(text)
    if unsafe is not None:
        return None, what(unsafe.kind) or unsafe.reason
    return (text if len(text) <= ENTRY_CHARS else text[: ENTRY_CHARS - 1].rstrip() + "…"), None


def serve(entries: list[str], limit: int) -> Served:
    """A hand-edited file as an agent may read it: each entry through ``safe_entry``, in order, within ``limit``."""
    out: list[str] = []
    withheld = cut = over = 0
    for i, e in enumerate(entries):
        redacted = _redacted(e)
        text, _ = _served(redacted)
        if text is None:
            withheld += 1
            continue
        if usage([*out, text], limit).chars > limit:
            over = len(entries) - i
            break
        cut += text != redacted
        out.append(text)
    return Served(out, withheld, cut, over)


def add(entries: list[str], text: str, limit: int, max_notes: int) -> list[str]:
    """The entries with ``text`` added; ``Refused`` when any rule says no."""
    entry = check_entry(text)
    for e in entries:
        if _same(e, entry):
            raise Refused(
                "the note repeats one already there" + ("" if e.strip().lower() == entry.lower() else f" ({_clip(e)})"),
                "Replace the old one instead (`kenang memory replace OLD NEW`)",
            )
    if len(entries) >= max_notes:
        raise Refused(
            f"the file already holds {len(entries)} notes, the most it may (memory.max_notes)",
            "Remove or merge notes first",
        )
    new = [*entries, entry]
    return _within(new, entries, limit)


def replace(entries: list[str], old: str, new_text: str, limit: int) -> list[str]:
    """The entries with the one holding ``old`` replaced by ``new_text``."""
    i = find(entries, old)
    entry = check_entry(new_text)
    for j, e in enumerate(entries):
        if j != i and _same(e, entry):
            raise Refused(f"the new note repeats another one ({_clip(e)})", "Remove one of them instead")
    new = [*entries[:i], entry, *entries[i + 1 :]]
    return _within(new, entries, limit)


def remove(entries: list[str], old: str) -> list[str]:
    i = find(entries, old)
    return [*entries[:i], *entries[i + 1 :]]


def find(entries: list[str], old: str) -> int:
    """The one entry holding ``old``; ``Refused`` listing them when none or several do."""
    needle = old.strip()
    if not needle:
        raise Refused("give part of the note to change", "Quote a few words of it")
    hits = [i for i, e in enumerate(entries) if needle.lower() in e.lower()]
    if not hits:
        raise Refused(f"no note holds {needle!r}", "See the notes with `kenang memory show`")
    if len(hits) > 1:
        listed = "; ".join(f"[{i + 1}] {_clip(entries[i])}" for i in hits)
        raise Refused(f"{len(hits)} notes hold {needle!r}: {listed}", "Quote more of the one you mean")
    return hits[0]


def problems(entries: list[str], limit: int, max_notes: int) -> list[str]:
    """What is wrong with a file as it stands (a hand edit); reported, never fixed silently."""
    out = []
    u = usage(entries, limit)
    if u.chars > limit:
        out.append(f"{u.chars:,} characters, over its {limit:,}: remove or shorten notes")
    if len(entries) > max_notes:
        out.append(f"{len(entries)} notes, over memory.max_notes={max_notes}")
    for i, e in enumerate(entries):
        try:
            check_entry(e)
        except Refused as exc:
            out.append(f"note {i + 1}: {exc.reason}")
    return out


def _within(new: list[str], old: list[str], limit: int) -> list[str]:
    now, then = usage(new, limit), usage(old, limit)
    if now.chars > limit:
        raise Refused(
            f"that would make {now.chars:,} characters, over the {limit:,} allowed (now "
            f"{then.chars:,}/{limit:,}, {then.percent}%)",
            "Remove or shorten a note first",
        )
    return new


def _clip(text: str, n: int = 60) -> str:
    """An entry quoted in a reason: redacted (a hand edit may hold a secret), then cut."""
    flat = " ".join(redact(text).text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
