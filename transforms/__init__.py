"""Pure transforms: bytes, strings, dataclasses and frames in; new ones out.

Nothing in this package touches the file system, DuckDB, Prefect or llama_cpp, and
nothing mutates its inputs. ``tests/test_import_hygiene.py`` holds it to that.
"""
