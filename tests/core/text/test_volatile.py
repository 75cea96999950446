"""The volatile patterns: clock times, dates, relative times, tokens and ids of every corpus
language go; words and numbers stay."""

from __future__ import annotations

import pytest

from changewatch.core.text import volatile
from changewatch.core.text.normalise import normalise, normalise_text, visible_text

from .._support import LANGUAGE_LINES

# --- volatile fragments: what cannot be content ------------------------------------------------------

VOLATILE = [
    "3 minutes ago",
    "1 hour ago",
    "an hour ago",
    "5m ago",
    "just now",
    "moments ago",
    "token=abc12345",
    "access_token=Zm9vYmFy1",
    "csrf: 8f14e45fceea167a5a36",
    "csrfmiddlewaretoken=Xy12Ab34",
    "session_id=12345678",
    "sessionid=AbCdEf12",
    "PHPSESSID=abc123def",
    "jsessionid=0A1B2C3D",
    "nonce=77a1b2c3d4",
    "deadbeefcafebabe1234",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "123e4567-e89b-12d3-a456-426614174000",
    "550E8400-E29B-41D4-A716-446655440000",
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz==",
    "dGhpcyBpcyBhIGJhc2U2NCBibG9iIDEyMw",
    "aZ3kP9_xQwe8rT5-yU7iO0pLkJhG",
]

# Dates, weekdays and times of day are content: kept as written, whatever the fetch time
CONTENT = [
    "10:32",
    "9:05",
    "10:32:05 PM",
    "10:32 am",
    "10:32 UTC",
    "10:32 CEST",
    "2026-11-30",
    "2026-11-30T10:32:05Z",
    "2026-11-30T10:32:05.123+01:00",
    "2026-11-30 10:32",
    "30/11/2026",
    "30 November 2026",
    "30th November 2026",
    "November 30, 2026",
    "Nov 30, 2026",
    "Nov. 30",
    "Mon, 30 Nov 2026",
    "Mon, 30 Nov 2026 10:32:05 GMT",
    "Monday, 30 November 2026",
    "Saturday",
    "10h30",
    "Session: Morning",
    "Auth: OAuth 2",
    "token: none",
    "Session: 2026-2027",
    "Order 1234567890123456",
    "today",
    "Today",
    "tomorrow",
    "yesterday",
    "tonight",
]


@pytest.mark.parametrize("fragment", VOLATILE)
def test_volatile_fragment_removed(fragment: str) -> None:
    assert normalise(f"<p>alpha {fragment} omega</p>") == "alpha omega"


@pytest.mark.parametrize("fragment", CONTENT)
def test_dates_and_times_are_kept_as_written(fragment: str) -> None:
    assert normalise(f"<p>alpha {fragment} omega</p>") == f"alpha {fragment} omega"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Doors open at 19:30.", "Doors open at 21:00."),
        ("Application deadline: 12 March 2027.", "Application deadline: 19 March 2027."),
        ("We are open on Tuesday at 6 pm.", "We are open on Thursday at 6 pm."),
        ("Saturday: 10:00 - 16:00", "Saturday: 10:00 - 14:00"),
        ("Roundhay Park reopened on Saturday after a year of work",
         "Roundhay Park reopened on Sunday after a year of work"),
        ("Effective from 1 February 2027", "Effective from 1 March 2027"),
        ("Generated 2026-11-30T10:32:05Z", "Generated 2026-12-01T08:00:00Z"),
        ("Tue, 01 Dec 2026 09:00:00 GMT", "Mon, 30 Nov 2026 10:32:05 GMT"),
        ("The library is closed today.", "The library is closed tomorrow."),
        ("Subscribe today for £1 a week.", "Subscribe now for £1 a week."),
    ],
)
def test_a_changed_date_or_time_is_a_changed_text(old: str, new: str) -> None:
    page = "<h1>Terms of service</h1><p>{}</p><p>The terms are these.</p>"
    a, b = visible_text(page.format(old)), visible_text(page.format(new))
    assert a.stable != b.stable
    assert old in a.stable and new in b.stable


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Posted 3 minutes ago", "Posted 2 hours ago"),
        ("Request id 6f1c2b9ad04e4e1b9e1f", "Request id 0a9b8c7d6e5f40312233"),
        ("<input value='x'> csrf: AAAA1111", "<input value='x'> csrf: BBBB2222"),
    ],
)
def test_volatile_differences_give_the_same_stable_text(old: str, new: str) -> None:
    page = "<h1>Terms of service</h1><p>{}</p><p>The terms are these.</p>"
    a, b = visible_text(page.format(old)), visible_text(page.format(new))
    assert a.raw != b.raw
    assert a.stable == b.stable


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>Price 89.00 EUR</p>", "Price 89.00 EUR"),
        ("<p>Only 2 in stock</p>", "Only 2 in stock"),
        ("<p>Chapter 12, page 345</p>", "Chapter 12, page 345"),
        ("<p>Save 15% on 3 items</p>", "Save 15% on 3 items"),
        ("<p>Version 2.5 of the rules</p>", "Version 2.5 of the rules"),
        ("<p>The cat sat in the sun</p>", "The cat sat in the sun"),
        ("<p>Mon ami a mangé</p>", "Mon ami a mangé"),
        ("<p>They wed in spring</p>", "They wed in spring"),
        ("<p>Doors open at 19:30 first come first served</p>", "Doors open at 19:30 first come first served"),
        ("<p>Kick-off 20:00 next door, 14:30 best seats</p>", "Kick-off 20:00 next door, 14:30 best seats"),
        ("<p>Autonomie 10h30</p>", "Autonomie 10h30"),
        ("<p>Tokens are words, sessions are meetings</p>", "Tokens are words, sessions are meetings"),
        ("<p>Extraordinarily uncharacteristically</p>", "Extraordinarily uncharacteristically"),
        ("<p>The covid-19-vaccination-programme starts</p>", "The covid-19-vaccination-programme starts"),
        ("<p>See state-of-the-art-2024-edition-notes</p>", "See state-of-the-art-2024-edition-notes"),
        # a quantity or price next to a word that also marks a relative time ("ago")
        ("<p>Il y a 3 exemplaires disponibles</p>", "Il y a 3 exemplaires disponibles"),
        ("<p>Il y a 3 annonces</p>", "Il y a 3 annonces"),
        ("<p>Há 5 unidades em estoque</p>", "Há 5 unidades em estoque"),
        ("<p>Acum 199 lei</p>", "Acum 199 lei"),
        ("<p>Bestellen Sie vor 14 Uhr, Versand heute</p>", "Bestellen Sie vor 14 Uhr, Versand heute"),
        ("<p>Limit: vor 2 Personen</p>", "Limit: vor 2 Personen"),
        ("<p>Saad 10 eurot tagasi</p>", "Saad 10 eurot tagasi"),
        ("<p>Hace 2 goles</p>", "Hace 2 goles"),
        ("<p>Hace 2 diamantes</p>", "Hace 2 diamantes"),
        ("<p>před 3 letadly</p>", "před 3 letadly"),
        ("<p>pred 2 domami</p>", "pred 2 domami"),
        ("<p>לפני 3 מוצרים</p>", "לפני 3 מוצרים"),
        ("<p>منذ 3 منتجات</p>", "منذ 3 منتجات"),
        ("<p>Krijg 10 euro geleden</p>", "Krijg 10 euro geleden"),
        ("<p>10 złotych temu</p>", "10 złotych temu"),
        ("<p>10 рублей назад</p>", "10 рублей назад"),
        ("<p>Saat 10 euroa sitten</p>", "Saat 10 euroa sitten"),
        ("<p>১০ টাকা আগে</p>", "১০ টাকা আগে"),
        ("<p>库存100件前</p>", "库存100件前"),
        # a month name that is a word too, after a number but without a year ("Mars", Romanian "mai": more)
        ("<p>Pack of 3 Mars bars</p>", "Pack of 3 Mars bars"),
        ("<p>Avem 5 mai multe modele</p>", "Avem 5 mai multe modele"),
        ("<p>Stock: 5 maj</p>", "Stock: 5 maj"),
        ("<p>Zimmer 12 mars</p>", "Zimmer 12 mars"),
        ("<p>Top 5 marca</p>", "Top 5 marca"),
    ],
)
def test_ordinary_words_and_numbers_survive(html: str, expected: str) -> None:
    assert normalise(html) == expected


def test_a_real_change_next_to_a_volatile_fragment_is_still_seen() -> None:
    before = normalise("<p>Updated 3 minutes ago: price 89.00</p>")
    after = normalise("<p>Updated 5 minutes ago: price 79.00</p>")
    assert before != after
    assert "89.00" in before and "79.00" in after


@pytest.mark.parametrize("fragment", VOLATILE)
def test_every_volatile_fragment_trips_the_line_prefilter(fragment: str) -> None:
    """Lines the prefilter skips are never scanned for volatile fragments: each kind we remove
    must trip it, or it would survive normalisation."""

    assert volatile.TRIGGER.search(fragment.casefold())


@pytest.mark.parametrize("fragment", VOLATILE)
def test_every_pattern_that_matches_a_fragment_finds_its_words_in_it(fragment: str) -> None:
    """A pattern is skipped over text without any of its words (_NEEDS): each match of each
    pattern in every kind of fragment we remove must contain one of them."""

    text = fragment.casefold()
    matched = 0
    for pattern, needs in zip(volatile._VOLATILE, volatile._NEEDS, strict=True):
        for match in pattern.finditer(text):
            matched += 1
            assert not needs or any(word in match.group(0) for word in needs), (pattern.pattern, match.group(0))
    assert matched or volatile._BLOB.search(text), f"nothing removes {fragment!r}"


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>model x12:30 and abc2026-01-01 stay</p>", "model x12:30 and abc2026-01-01 stay"),
        ("<p>serial zz0123456789abcdef01 stays</p>", "serial zz0123456789abcdef01 stays"),
        ("<p>at 12:30 on 2026-01-01 done</p>", "at 12:30 on 2026-01-01 done"),
        ("<p>access_token=Zm9vYmFy and x</p>", "and x"),
    ],
)
def test_fragments_are_only_removed_from_a_word_boundary(html: str, expected: str) -> None:
    assert normalise(html) == expected


# --- the corpus's languages -------------------------------------------------------------------------


@pytest.mark.parametrize("language", list(LANGUAGE_LINES))
def test_relative_times_of_each_corpus_language_are_volatile_and_dates_stay(language: str) -> None:
    first, second = (normalise_text(line).stable for line in LANGUAGE_LINES[language])
    assert first == second
    # the date stays, as written
    assert first.split()[:2] == LANGUAGE_LINES[language][0].split()[:2]
    assert "2026" in first or "২০২৬" in first, first


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # relative times, each language's marker with a time unit
        ("Il y a 3 jours : Prix", "Prix"), ("il y a 2 ans, Prix", "Prix"), ("vor 3 Tagen: Preise", "Preise"),
        ("vor 1 Jahr: Preise", "Preise"), ("hace 2 días: Precios", "Precios"), ("hace 3 meses: Precios", "Precios"),
        ("há 5 minutos: Preços", "Preços"), ("há 2 anos: Preços", "Preços"), ("před 3 dny: Ceny", "Ceny"),
        ("před 5 lety: Ceny", "Ceny"), ("pred 20 rokmi: Ceny", "Ceny"), ("acum 20 de minute: Prețuri", "Prețuri"),
        ("acum 2 ani: Prețuri", "Prețuri"), ("לפני 3 ימים: מחירים", "מחירים"), ("منذ 3 أيام: الأسعار", "الأسعار"),
        ("3 dagen geleden: Prijzen", "Prijzen"), ("2 weken geleden: Prijzen", "Prijzen"),
        ("3 dni temu: Ceny", "Ceny"), ("5 lat temu: Ceny", "Ceny"), ("3 дня назад: Цены", "Цены"),
        ("5 мин. назад: Цены", "Цены"), ("2 viikkoa sitten: Hinnat", "Hinnat"), ("3 päeva tagasi: Hinnad", "Hinnad"),
        ("৩ দিন আগে: দাম", "দাম"), ("价格 3天前", "价格"), ("価格 2週間前", "価格"), ("価格 3ヶ月前", "価格"),
    ],
)
def test_relative_times_of_other_languages_go(line: str, expected: str) -> None:
    assert normalise_text(line).stable == expected


@pytest.mark.parametrize("line", ["Termin: 5. Mai", "le 30 mars 2026, Prix", "5 maja 2026 r. Ceny", "Mai 2026: Preise",
                                  "Montag, 30. November 2026", "2026年11月30日 星期一", "月曜日", "Sunday roast",
                                  "domingo 5 de mayo"])
def test_dates_and_weekdays_of_other_languages_are_content(line: str) -> None:
    assert normalise_text(line).stable == line


def test_volatile_patterns_match_in_any_case() -> None:
    assert normalise_text("UPDATED 3 HOURS AGO").stable == "UPDATED"
    assert normalise_text("Posted 3 Hours Ago. TOKEN=AbC123xYz").stable == "Posted"
    assert normalise_text("id QUJDREVGR0hJSktMTU5PUFFSU1RVVldY1234 end").stable == "id end"


def test_a_removed_fragment_takes_only_its_own_separators() -> None:
    assert normalise_text("Updated 3 hours ago: Parsing JSON at gigabytes per second.").stable == (
        "Updated : Parsing JSON at gigabytes per second.")
    assert normalise_text("3 hours ago: Parsing JSON.").stable == "Parsing JSON."
    assert normalise_text("Parsing JSON. Updated: just now").stable == "Parsing JSON. Updated"
    assert normalise_text("· Home | News ·").stable == "· Home | News ·"


@pytest.mark.parametrize("line", [line for pair in LANGUAGE_LINES.values() for line in pair])
def test_every_language_fragment_trips_the_prefilter_and_holds_its_patterns_words(line: str) -> None:

    text = line.lower()
    assert volatile.TRIGGER.search(text)
    for pattern, needs in zip(volatile._VOLATILE, volatile._NEEDS, strict=True):
        for match in pattern.finditer(text):
            assert not needs or any(word in match.group(0) for word in needs), (pattern.pattern, match.group(0))


def test_an_id_written_right_after_chinese_or_japanese_text_is_volatile() -> None:
    assert normalise_text("编号123e4567-e89b-12d3-a456-426614174000").stable == "编号"
    assert normalise_text("更新时间2026-11-30 10:32").stable == "更新时间2026-11-30 10:32"
    assert normalise_text("model x12:30 and abc2026-01-01 stay").stable == "model x12:30 and abc2026-01-01 stay"
