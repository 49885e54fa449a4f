"""Content-hash ids: the fast encoding of an id's fields is the JSON text the ids were always made of."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from transforms import ids

_FIELD = st.one_of(
    st.text(),  # any code point, surrogates, quotes, backslashes and control characters included
    st.integers(min_value=-(2**80), max_value=2**80),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.dates(),
    st.lists(st.integers(), max_size=3),
)


@given(st.lists(_FIELD, max_size=8).map(tuple))
def test_an_id_encodes_its_fields_as_json_does(parts):
    assert ids._encode(parts) == ids._ENCODE(parts)


def test_ids_keep_their_values():
    """Ids already stored in homes do not change: the values the JSON encoder gave them."""
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.UTC)
    assert ids.message_id("rina", "s1", "user", ts, 'halo "é"\n', 0) == "fad9d27c98c29ae22819b83bbafddba2"
    assert ids.chunk_id("rina", dt.date(2024, 1, 2), None, "summary", "teks") == "d83f4487de1ade5fee6d8023ce0ddccd"
    assert ids.fingerprint(["b", "a", "ü"]) == "8724ea7346f8625a2c89fee3520625a24dda689aff69c1ccec8a6a72eb7bbf12"
    rows = [("a", 1, None, 1.5, dt.date(2024, 1, 2), True), ("b",)]
    assert ids.row_fingerprint(rows) == "946bebf90e22ca4136ca532bd40b3487ed24bee115ca432967740859d5fd2ff7"
