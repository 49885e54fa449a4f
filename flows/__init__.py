"""The parts of kenang that touch the world, and the Prefect flows that wire them.

Importing this package imports no Prefect: only ``flows.pipeline`` does, so queries
(``kenang sql``, ``status``, ``verify``) never start a Prefect server.

It sets two things for the whole process (and the pool's workers, which inherit it),
before any library that reads them can load, unless the environment says otherwise:

- OpenMP threads that wait for work sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``).
  With two processes on two cores, spinning threads took a three-message day from
  seconds to over 20 minutes.
- Arrow's allocator (mimalloc) hands memory it freed back to the system at once
  (``MIMALLOC_PURGE_DELAY=0``) instead of keeping it a while for later. After a huge
  day's batches it kept hundreds of MiB that the night's next stage never reused; the
  night's time did not change.
"""

import os as _os

_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
_os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")
