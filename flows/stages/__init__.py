"""One module per nightly stage: ingest, quarantine, archive, load, summarize, memory_file, recall_index, catalog.

Plus ``plan`` (which days each stage takes), ``imports`` (``kenang import``'s staging and
preview) and ``progress`` (counts of long work, for the CLI or a worker's log). Each
stage reads, calls the pure functions of ``transforms/`` and writes through
``flows.store``; none imports Prefect (``flows.pipeline`` wires them).
"""
