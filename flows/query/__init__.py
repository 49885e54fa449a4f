"""What answers questions, and never blocks a run: recall, the SQL lane's trends (``analyze``), and locked SQL (``sql``).

Nothing here imports Prefect (``tests/test_layering.py``).
"""
