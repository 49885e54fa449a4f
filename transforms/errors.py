"""The one exception root of kenang.

Every error kenang raises on purpose is a ``KenangError``. It comes in two kinds:

- ``TransientError``: the world may heal (a NAS that blinked, a busy disk). Prefect
  retries these, and only these.
- ``TerminalError``: retrying cannot help (a broken transcript, a bad config). These
  are reported, quarantined or surfaced, never retried.

Third-party errors are wrapped where they are raised, ``raise X(...) from exc``, so a
traceback always names the kenang stage that met it.
"""

from __future__ import annotations


class KenangError(Exception):
    """Root of every error kenang raises on purpose."""


class TransientError(KenangError):
    """A failure that may pass on retry (I/O on a flaky mount, a lock briefly held)."""


class TerminalError(KenangError):
    """A failure that a retry cannot fix."""


class ModelUnavailable(KenangError):
    """A model server cannot be used now (down, overloaded, refusing the key): the days it was to
    summarize or index wait for a later night, with this reason; the night itself goes on."""


class ModelRefused(TerminalError):
    """A model server that answers refused this one request (a 400, or failing on it alone while it
    answers others): the day it was for fails, with this reason, and the other days go on."""


class ConfigError(TerminalError):
    """kenang.yaml or a command-line option is wrong; nothing runs."""


class UsageError(ConfigError):
    """A command's options are wrong (kenang.yaml is not): said as such, never as a configuration error."""


class ParseError(TerminalError):
    """A transcript kenang cannot read. ``reason`` is the one line a user sees in quarantine."""

    def __init__(self, reason: str, *, kind: str = "unreadable") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


class ArchiveError(TerminalError):
    """The archive refused a file or failed verification; the source is kept."""


class ArchiveUnreachable(TransientError):
    """The archive's bucket cannot be reached now (down, timing out, refusing the credentials): nothing
    is uploaded and no source deleted; the night goes on with its local copy, and the next one catches up."""


class LockHeld(TerminalError):
    """Another kenang run holds the run lock."""


class PrefectUnreachable(TransientError):
    """The Prefect server a run is to report to (PREFECT_API_URL) does not answer: the run does not start."""


class StageFailed(KenangError):
    """A stage failed as a whole; carries the stage name and the run id (dlt's PipelineStepFailed)."""

    def __init__(self, stage: str, run_id: str, message: str) -> None:
        super().__init__(f"stage {stage!r} of run {run_id} failed: {message}")
        self.stage = stage
        self.run_id = run_id
