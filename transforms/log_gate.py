"""The redaction gate for logs: every log record passes ``transforms.redact`` from its creation on.

``install()`` wraps the process's log record factory, so a record's message (its
arguments filled in), traceback and stack are redacted before any handler sees them:
the console, a file, Prefect's API and UI. A filter on one logger would miss its
children's records and every other library's; the factory sees them all.

Installing is cheap and idempotent: the redactor is imported on the first record, so a
command that never logs never pays for it. The entry points install it (the CLI, the
flows).
"""

from __future__ import annotations

import logging


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

        record.msg, record.args = redact(message).text, None
        if record.exc_text:
            record.exc_text = redact(record.exc_text).text
        if record.stack_info:
            record.stack_info = redact(record.stack_info).text
        return record

    gated.kenang_gate = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(gated)
