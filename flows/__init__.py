"""The parts of kenang that touch the world, and the Prefect flows that wire them.

Importing this package imports no Prefect: only ``flows.pipeline`` does, so queries
(``kenang sql``, ``status``, ``verify``) never start a Prefect server.

It sets one thing for the whole process, before any model library can load: OpenMP
threads that wait for work sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``, unless
the environment says otherwise). With two processes on two cores, spinning threads
took a three-message day from seconds to over 20 minutes.
"""

import os as _os

_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
