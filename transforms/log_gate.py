"""The redaction gate for logs: every log record passes ``transforms.redact`` from its creation on.

``install()`` wraps the process's log record factory, so a record's message (its
arguments filled in), traceback and stack are redacted before any handler sees them:
the console, a file, Prefect's API and UI. A record that holds no secret is left as it
is; in one that does, the arguments are redacted in place (a formatter may read them). A filter on one logger would miss its
children's records and every other library's; the factory sees them all.

Installing is cheap and idempotent: the redactor is imported on the first record, so a
command that never logs never pays for it. The entry points install it (the CLI, the
flows).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping


def install() -> None:
    """Redact every log record of this process from now on (again: no change)."""
    old = logging.getLogRecordFactory()
    if getattr(old, "kenang_gate", False):
        return

    def gated(*args, **kwargs) -> logging.LogRecord:
        record = old(*args, **kwargs)
        try:
            message = record.getMessage()
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is logging's to report
            return record
        from transforms.redact import redact

        if redact(message).text != message:
            _redact_message(record, message, redact)
        if record.exc_text:
            record.exc_text = redact(record.exc_text).text
        if record.stack_info:
            record.stack_info = redact(record.stack_info).text
        return record

    gated.kenang_gate = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(gated)


def _redact_message(record: logging.LogRecord, message: str, redact) -> None:
    """Redact a record whose message holds a secret. Its arguments are redacted in place, so a
    formatter that reads them (uvicorn's access log unpacks five) still can; where the secret
    spans the format and an argument, the whole message is redacted and the arguments dropped."""
    if isinstance(record.args, tuple) and record.args:
        record.args = tuple(_redacted_arg(a, redact) for a in record.args)
    elif isinstance(record.args, Mapping) and record.args:
        record.args = {k: _redacted_arg(v, redact) for k, v in record.args.items()}
    else:
        record.msg = redact(str(record.msg)).text
    try:
        now = record.getMessage()
    except Exception:  # noqa: BLE001 - a redacted argument the format cannot take
        now = None
    if now is None or redact(now).text != now:
        record.msg, record.args = redact(message).text, None


def _redacted_arg(value: object, redact) -> object:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(value if isinstance(value, str) else str(value)).text
