"""Which validators are kept, and when a re-visit may be conditional."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from changewatch.core.validators import HttpValidators, accept_validators, parse_http_date, revalidation

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("etag,kept", [
    ('"abc"', '"abc"'), ('W/"abc"', 'W/"abc"'), ("unquoted-etag", "unquoted-etag"), ("  \"x\"  ", '"x"'),
    ("", None), ('"' + "a" * 1022 + '"', '"' + "a" * 1022 + '"'), ('"' + "a" * 1023 + '"', None),
    ('"bad\x00"', None), ('"tab\tok"', '"tab\tok"'), ('"caf\xe9"', '"caf\xe9"'),
])
def test_etags(etag: str, kept: str | None) -> None:
    assert accept_validators(etag.encode("latin-1"), None, None, NOW)[0] == kept


@pytest.mark.parametrize("lm,date,kept", [
    ("Mon, 30 Nov 2026 11:00:00 GMT", None, True),
    ("Mon, 30 Nov 2026 12:04:00 GMT", None, True),  # within the clock-skew allowance
    ("Tue, 01 Dec 2026 12:00:00 GMT", None, False),  # a day in the future
    ("Tue, 01 Dec 2026 12:00:00 GMT", "Tue, 01 Dec 2026 13:00:00 GMT", True),  # the server's clock says fine
    ("Mon, 30 Nov 2026 11:00:00 GMT", "Sun, 29 Nov 2026 00:00:00 GMT", False),  # after the server's own Date
    ("Monday", None, False), ("0", None, False), ("Mon, 99 Nov 2026 11:00:00 GMT", None, False),
    ("Mon, 30 Nov 2026 11:00:00 GMT" + " " * 2000, None, True),
])
def test_last_modified(lm: str, date: str | None, kept: bool) -> None:
    got = accept_validators(None, lm.encode(), date.encode() if date else None, NOW)[1]
    assert got == (lm.strip() if kept else None)


@given(st.binary(max_size=3000), st.binary(max_size=200), st.one_of(st.none(), st.binary(max_size=60)))
def test_accept_validators_never_raises(etag: bytes, lm: bytes, date: bytes | None) -> None:
    kept_etag, kept_lm, refused = accept_validators(etag, lm, date, NOW)
    assert kept_etag is None or len(kept_etag) <= 1024
    assert kept_lm is None or parse_http_date(kept_lm) is not None
    assert all(isinstance(r, str) for r in refused)


def _row(key: str = "k", **kw: object) -> HttpValidators:
    base: dict[str, object] = {"url": "u", "key": key, "etag": '"a"', "last_modified": None,
                               "full_at": "2026-11-30T00:00:00Z", "runs": 0, "spec": None}
    base.update(kw)
    return HttpValidators(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("rows,spec,reason", [
    ([], None, "unknown"),
    ([_row(etag=None)], None, "no_validators"),
    ([_row("a"), _row("b", etag='"b"')], None, "keys_disagree"),
    ([_row("a"), _row("b", full_at="2026-11-29T00:00:00Z")], None, "keys_disagree"),
    ([_row(spec="old")], "new", "spec_changed"),
    ([_row(runs=24)], None, "max_runs"),
    ([_row(full_at="2026-11-23T11:59:59Z")], None, "max_age"),
    ([_row(full_at="not a time")], None, "max_age"),
    ([_row("a"), _row("b")], None, None),
    ([_row(full_at="2026-11-23T12:00:01Z", runs=23)], None, None),
])
def test_revalidation(rows: list[HttpValidators], spec: str | None, reason: str | None) -> None:
    plan = revalidation(rows, now=NOW, spec=spec, max_runs=24, max_age=timedelta(days=7))
    assert plan.full_fetch == reason
    if reason is None:
        assert plan.etag == '"a"' and plan.keys == tuple(r.key for r in rows)
