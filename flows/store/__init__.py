"""Where kenang keeps things, and how it checks them.

``fsio`` (atomic writes, verified copies), ``warehouse`` (Parquet, checksums),
``ledger`` (days, runs, pending marks), ``archive_files`` (the archive's layout,
manifests and record), ``mount`` (is the archive really there), ``lock`` (one run at a
time), ``faults`` (crash-test boundaries), ``verify`` and ``adopt`` (the commands that
check the record and take a stray file into it).
"""
