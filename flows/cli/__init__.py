"""The command line: ``kenang`` (``main``), what it gathers (``facts``) and prints (``report``), and ``kenang demo``.

``demo`` builds and runs the sample home; ``demo_corpus`` generates its three weeks of
bilingual chats from the templates in ``demo_data/`` (the benchmarks reuse them).
"""
