"""Named step boundaries, for crash-injection tests.

Production code calls ``checkpoint("archive.copied")`` between steps; it does nothing.
A crash test replaces ``flows.store.faults.checkpoint`` in a child process with one that
``os._exit``s at a chosen name, then proves the next run reaches the same final state.
Call it as ``faults.checkpoint(...)`` (attribute lookup at call time) so the
replacement takes effect everywhere.
"""

from __future__ import annotations

#: Every boundary the code declares, in the order a nightly run meets them.
BOUNDARIES = (
    "run.locked",
    "quarantine.copied",
    "quarantine.verified",
    "quarantine.placed",
    "quarantine.sidecar",
    "quarantine.recorded",
    "archive.copied",
    "archive.verified",
    "archive.placed",
    "archive.batch_placed",
    "archive.pending_marked",
    "archive.manifest_written",
    "archive.recorded",
    "archive.uploaded",
    "archive.source_deleted",
    "load.partition_written",
    "load.day_done",
    "load.ledger_written",
    "load.settled",
    "summarize.file_written",
    "summarize.day_done",
    "open_items.table_written",
    "memory_file.written",
    "index.day_done",
    "compact.written",
    "catalog.built",
    "run.recorded",
)

#: Boundaries met only with an archive on S3 (``flows.store.remote``): after each object's upload, before its read-back.
REMOTE_BOUNDARIES = ("remote.uploaded",)


def checkpoint(name: str) -> None:
    """A step boundary; a no-op outside crash tests."""
