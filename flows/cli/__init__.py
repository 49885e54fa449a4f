"""The command line: ``kenang`` (``main``), what it prints (``report``), and ``kenang demo`` (``demo``)."""
