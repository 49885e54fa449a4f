"""The parts of kenang that touch the world, and the Prefect flows that wire them.

Importing this package imports no Prefect: only ``flows.pipeline`` does, so queries
(``kenang sql``, ``status``, ``verify``) never start a Prefect server.
"""
