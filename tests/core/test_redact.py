"""The redactor, on its own: what must go before a diff leaves the machine, and what must stay."""

from __future__ import annotations

import pytest

from changewatch.core.redact import iban_valid, luhn_valid, redact

# (text, what must be gone from the redacted text, the word that replaces it)
REMOVED = [
    ("mail jane.doe@example.com now", "jane.doe@example.com", "[email]"),
    ("Kontakt: max.mustermann+shop@beispiel-firma.de.", "max.mustermann+shop@beispiel-firma.de", "[email]"),
    ("<a href='mailto:SALES@Shop.Example.CO.UK'>", "SALES@Shop.Example.CO.UK", "[email]"),
    ("call +44 20 7946 0958 today", "+44 20 7946 0958", "[phone]"),
    ("Tel.: +49 (0)30 1234567", "+49 (0)30 1234567", "[phone]"),
    ("+1-202-555-0143", "202-555-0143", "[phone]"),
    ("(212) 555-0199 ext", "555-0199", "[phone]"),
    ("ring 415.555.0132", "415.555.0132", "[phone]"),
    ("Telefon: 030 12345678", "030 12345678", "[phone]"),
    ("Phone 020 7946 0958", "020 7946 0958", "[phone]"),
    ("Fax: 0049-89-123456", "0049-89-123456", "[phone]"),
    ("<a href=\"tel:+33142685300\">", "+33142685300", "[phone]"),
    ("Visa 4111 1111 1111 1111 exp", "4111 1111 1111 1111", "[card]"),
    ("mc 5500-0000-0000-0004", "5500-0000-0000-0004", "[card]"),
    ("number 4012888888881881 charged", "4012888888881881", "[card]"),
    ("Amex 3782 822463 10005", "3782 822463 10005", "[card]"),
    ("IBAN: DE89 3704 0044 0532 0130 00 (Sparkasse)", "DE89 3704 0044 0532 0130 00", "[iban]"),
    ("GB82WEST12345698765432", "GB82WEST12345698765432", "[iban]"),
    ("FR14 2004 1010 0505 0001 3M02 606 AB", "FR14 2004 1010 0505 0001 3M02 606", "[iban]"),
    ("Authorization: Bearer abcDEF123456ghiJKL789", "abcDEF123456ghiJKL789", "[secret]"),
    ("key sk-proj-Abc123def456GHI789jkl012MNO", "sk-proj-Abc123def456GHI789jkl012MNO", "[secret]"),
    ("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx", "sk-abcdefghijklmnopqrstuvwx", "[secret]"),
    ("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "[secret]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
     "[secret]"),
    ("aws AKIAIOSFODNN7EXAMPLE id", "AKIAIOSFODNN7EXAMPLE", "[secret]"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "[secret]"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJhbGciOiJIUzI1NiJ9", "[secret]"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012", "[secret]"),
    ("api_key: 9f8e7d6c5b4a", "9f8e7d6c5b4a", "[secret]"),
    ('{"password": "hunter2hunter2"}', "hunter2hunter2", "[secret]"),
    ("session=3f2a9c0e4b7d1f6a8c5e2b9d0a7f4c1e", "3f2a9c0e4b7d1f6a8c5e2b9d0a7f4c1e", "[secret]"),
    ("digest 9e107d9d372bb6826bd81d3542a419d6", "9e107d9d372bb6826bd81d3542a419d6", "[secret]"),
    ("csrf Zx8Kq2Lm9Pw4Rt7Yv1Bn6Hc3Jd5Fg0Sa2Qe8Wu4", "Zx8Kq2Lm9Pw4Rt7Yv1Bn6Hc3Jd5Fg0Sa2Qe8Wu4", "[secret]"),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "[secret]"),
    ("sk_live_51H8abcdefGHIJKLmnop", "sk_live_51H8abcdefGHIJKLmnop", "[secret]"),
]

# text that must come out exactly as it went in
KEPT = [
    "Price: €1,299.00 (was €1,499.00)",
    "£ 79.99 incl. VAT; $1,234,567.89 total",
    "1.234.567,89 EUR",
    "Updated 2026-11-30 at 12:30:45",
    "30.11.2026, 30/11/2026, 11/30/2026, Nov 30, 2026",
    "SKU KT-2000-BLK, item 100234, EAN 4006381333931",
    "ISBN 978-3-16-148410-0",
    "Order #1234567890 shipped",
    "Version 2.19.0 released; build 20261130",
    "Population 8 336 817; area 783.8 km²",
    "Call us for a quote",
    "Rent £950 pcm, 2 bedrooms, postcode SW1A 1AA",
    "Temperature -12.5 °C, pressure 1013 hPa",
    "Tracking number 1Z999AA10123456784",
    "https://shop.example/products/a-very-long-product-name-with-many-words-2026",
    "/category/Kitchen-Appliances-And-Small-Electricals/Kettles",
    "The password reset page moved.",
    "Token ring networks were common in 1990.",
    "Monday 09:00-17:30, Saturday 10:00-14:00",
    "Coordinates 51.5072, -0.1276",
    "Model number ABC123DEF456",
    "4111 1111 1111 1112 is not a card (fails Luhn)",
    "DE89 3704 0044 0532 0130 01 is not an IBAN (fails mod-97)",
    "Year range 1999-2004-2010",
    "Score 3-1, 12-10",
]


@pytest.mark.parametrize(("text", "gone", "word"), REMOVED)
def test_what_identifies_people_or_grants_access_is_removed(text: str, gone: str, word: str) -> None:
    redacted = redact(text)
    assert gone not in redacted, redacted
    assert word in redacted, redacted


@pytest.mark.parametrize("text", KEPT)
def test_prices_dates_skus_and_ordinary_numbers_are_kept_as_written(text: str) -> None:
    assert redact(text) == text


def test_the_words_around_a_removed_value_stay() -> None:
    assert redact("Contact: a@b.example (sales)") == "Contact: [email] (sales)"
    assert redact("Authorization: Bearer abcDEF123456ghiJKL789") == "Authorization: Bearer [secret]"
    assert redact("api_key=9f8e7d6c5b4a&page=2") == "api_key=[secret]&page=2"
    assert redact("IBAN DE89 3704 0044 0532 0130 00 ABCD") == "IBAN [iban] ABCD"


def test_a_diff_keeps_its_shape() -> None:
    diff = "- Price 89.00, call +44 20 7946 0958\n+ Price 79.00, mail offers@shop.example\n  Stock: 12"
    assert redact(diff) == "- Price 89.00, call [phone]\n+ Price 79.00, mail [email]\n  Stock: 12"


def test_it_is_deterministic_and_idempotent() -> None:
    text = " ".join(t for t, _, _ in REMOVED)
    once = redact(text)
    assert redact(text) == once and redact(once) == once


def test_the_check_digit_functions() -> None:
    assert luhn_valid("79927398713") and not luhn_valid("79927398710")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert not iban_valid("XX00") and not iban_valid("12AB34567890123456")
