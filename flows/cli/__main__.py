"""``python -m flows.cli ARGS``: the same as ``kenang ARGS``."""

from flows.cli.main import main

main()
