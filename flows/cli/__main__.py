"""``python -m flows.cli ARGS``: the same as ``kenang ARGS``.

Guarded, as every main module that may start the process pool (``flows.stages.pool``)
should be (multiprocessing itself skips a package's ``__main__``).
"""

from flows.cli.main import main

if __name__ == "__main__":
    main()
