"""Declarations, made once: table schemas, the config schema, and shipped data files."""
