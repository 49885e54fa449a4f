"""A GBNF grammar for the note's JSON reply, written from its JSON schema, that a small model cannot break.

llama.cpp's own JSON-schema grammar (llama-cpp-python 0.3.36) lets control characters
into strings (a raw newline, which strict JSON refuses), allows empty strings, ignores
``minimum``/``maximum`` and unrolls ``maxItems``/``maxLength`` into slow rules. This
grammar covers the subset of JSON schema the note's reply uses, and is stricter:

- an object's keys come in the schema's order, all of them (the summary first, so a
  reply cut at ``max_tokens`` loses a list, never the summary);
- a string has at least one character and starts with a non-space; no control
  character, raw or escaped, except ``\\n`` where a string's ``x-newlines`` is true (the
  summary's paragraphs); no ``<`` or ``>`` (a small model fills lists with HTML);
- an ``enum`` of strings or integers is a fixed list of literals (importance is one of
  1..10, mood one of the moods);
- an array holds at most ``maxItems`` items (``{0,n}``, a counted repetition, not
  unrolled);
- whitespace between tokens is at most one space or newline, so a model cannot pad
  its way to ``max_tokens``.

Pure: strings in, a string out (``flows.models.llm`` compiles it with llama_cpp).
"""

from __future__ import annotations

import json
import re

_PLAIN = r'[^"\\<>\x00-\x1f\x7f ]'  # a string's first character: no quote, backslash, control, space or angle
_CHAR = r'[^"\\<>\x00-\x1f\x7f]'
_ESC = r'"\\" ["\\/]'
_ESC_NL = r'"\\" ["\\/n]'


def _literal(value: object) -> str:
    """A GBNF literal for a JSON value, as the model must write it."""
    return json.dumps(json.dumps(value, ensure_ascii=False), ensure_ascii=False)


def _rule_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "value"


def gbnf_of(schema: dict) -> str:
    """The GBNF grammar for ``schema`` (an object of strings, enums and arrays of strings)."""
    rules: dict[str, str] = {
        "ws": "[ \\n]?",
        "char": f"{_CHAR} | {_ESC}",
        "char-nl": f"{_CHAR} | {_ESC_NL}",
        "first": f"{_PLAIN} | {_ESC}",
        "string": '"\\"" first char* "\\""',
        "string-nl": '"\\"" first char-nl* "\\""',
    }

    def value(name: str, spec: dict) -> str:
        if "enum" in spec:
            rules[name] = " | ".join(_literal(v) for v in spec["enum"])
            return name
        kind = spec.get("type")
        if kind == "string":
            return "string-nl" if spec.get("x-newlines") else "string"
        if kind == "array":
            item = value(f"{name}-item", spec.get("items", {"type": "string"}))
            most = spec.get("maxItems")
            sep = '"," ws ' + item
            more = f"({sep}){{0,{most - 1}}}" if most else f"({sep})*"
            if most == 0:
                rules[name] = '"[" ws "]"'
            else:
                rules[name] = f'"[" ws ( {item} {more} ws )? "]"'
            return name
        if kind == "object":
            members = []
            for key, sub in spec.get("properties", {}).items():
                members.append(f'{_literal(key)} ws ":" ws {value(_rule_name(f"{name}-{key}"), sub)}')
            body = ' "," ws '.join(members)
            rules[name] = f'"{{" ws {body} ws "}}"'
            return name
        if kind == "integer":
            rules[name] = '"-"? [0-9]{1,10}'
            return name
        raise ValueError(f"the note's grammar cannot express a schema of type {kind!r}")

    root = value("root", schema)
    if root != "root":
        rules["root"] = root
    order = ["root", *[k for k in rules if k != "root"]]
    return "\n".join(f"{k} ::= {rules[k]}" for k in order) + "\n"


__all__ = ["gbnf_of"]
