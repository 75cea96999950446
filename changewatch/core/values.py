"""Typed normalisation of field values: prices, availability, dates, durations, numbers.

A field's *kind* says what its value means, so that two spellings of one meaning compare equal
("€ 1.234,56" and "1.234,56 EUR", "in stock" and ``http://schema.org/InStock``) while the raw
value is kept for display. ``auto`` is :func:`~changewatch.core.fields.normalise_value`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from .fields import normalise_value

__all__ = ["FIELD_KINDS", "infer_kind", "normalise_field", "normalise_fields"]

_WS = re.compile(r"\s+")
_MACHINE_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d+)?|\.\d+)$")

# Symbols that name one currency (the "$" family and "kr" do not, and are kept as written).
_CURRENCY_SYMBOLS = {"€": "EUR", "£": "GBP", "₹": "INR", "zł": "PLN", "₽": "RUB", "\u0440\u0443\u0431": "RUB",
                     "₺": "TRY", "₴": "UAH", "₩": "KRW", "₪": "ILS", "us$": "USD", "r$": "BRL", "₫": "VND",
                     "฿": "THB", "lei": "RON", "kč": "CZK", "ft": "HUF", "₱": "PHP"}


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return _WS.sub(" ", str(value)).strip()


def normalise_price(value: Any) -> Any:
    """Amount (plain decimal digits) and currency (ISO code where the symbol names one), parsed
    by price-parser from whatever the page shows; text without an amount is kept as text.

    >>> normalise_price("€ 1.234,56") == normalise_price("1.234,56 EUR") == "1234.56 EUR"
    True
    >>> normalise_price("1,234.56 USD"), normalise_price(89), normalise_price("Free")
    ('1234.56 USD', '89', '0')
    >>> normalise_price("ab 9,99 €"), normalise_price(""), normalise_price("Call us")
    ('9.99 EUR', None, 'Call us')
    >>> normalise_price("1234.560"), normalise_price("€ 1.234")
    ('1234.56', '1234 EUR')
    """
    if value is None or isinstance(value, bool):
        return normalise_value(value)
    if isinstance(value, int | float | Decimal):
        return normalise_value(value)
    text = _text(value)
    if not text:
        return None  # an empty price is a price that is missing, not a price of ""
    if _MACHINE_NUMBER.match(text):
        # Machine-written ("1234.560" in JSON-LD, a content attribute): a dot is a decimal point,
        # where price-parser would read "1.234" as a thousand.
        return normalise_value(text)
    from price_parser import Price  # here: a worker process that reads no price never imports it

    price = Price.fromstring(text)
    if price.amount is None:
        return text
    amount = normalise_value(price.amount)
    currency = (price.currency or "").strip()
    if not currency:
        return amount
    code = _CURRENCY_SYMBOLS.get(currency.lower(), currency.upper() if currency.isalpha() else currency)
    return f"{amount} {code}"


_AVAILABILITY = ("BackOrder", "Discontinued", "InStock", "InStoreOnly", "LimitedAvailability", "MadeToOrder",
                 "OnlineOnly", "OutOfStock", "PreOrder", "PreSale", "Reserved", "SoldOut")
_AVAILABILITY_BY_SQUASHED = {name.lower(): name for name in _AVAILABILITY}
_AVAILABILITY_PHRASES = {"available": "InStock", "instockonline": "InStock", "outofstockonline": "OutOfStock",
                         "unavailable": "OutOfStock", "notavailable": "OutOfStock",
                         "currentlyunavailable": "OutOfStock", "notinstock": "OutOfStock",
                         "preorder": "PreOrder", "backordered": "BackOrder", "limitedstock": "LimitedAvailability"}


def normalise_availability(value: Any) -> Any:
    """A schema.org ItemAvailability name for the usual spellings, else the text as it is.

    >>> {normalise_availability(v) for v in ("http://schema.org/InStock", "InStock", "in stock", "IN_STOCK")}
    {'InStock'}
    >>> normalise_availability("https://schema.org/OutOfStock"), normalise_availability("Sold out")
    ('OutOfStock', 'SoldOut')
    """
    if value is None:
        return None
    text = _text(value)
    tail = text.rstrip("/").rsplit("/", 1)[-1] if "schema.org" in text.lower() else text.removeprefix("schema:")
    squashed = re.sub(r"[\s_\-.!]+", "", tail).lower()
    return _AVAILABILITY_BY_SQUASHED.get(squashed) or _AVAILABILITY_PHRASES.get(squashed) or normalise_value(text)


_DATE_FORMATS = ("%d %b %Y", "%d %B %Y", "%b %d, %Y", "%B %d, %Y", "%d.%m.%Y", "%Y/%m/%d", "%d/%m/%Y")


def normalise_date(value: Any) -> Any:
    """ISO 8601: a day as ``YYYY-MM-DD``, an instant with an offset in UTC (two spellings of one
    instant compare equal), a local time as written; other text as it is.

    >>> normalise_date("2015-10-31T19:30:00-0400") == normalise_date("2015-10-31T23:30:00Z")
    True
    >>> normalise_date("2020-09-28"), normalise_date("31 Oct 2015"), normalise_date("soon")
    ('2020-09-28', '2015-10-31', 'soon')
    """
    if value is None:
        return None
    text = _text(value)
    if not text:
        return None
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        for fmt in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
        if parsed is None:
            from email.utils import parsedate_to_datetime

            try:
                parsed = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                return normalise_value(text)
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if ":" not in text:  # a day, not midnight of it
        return parsed.strftime("%Y-%m-%d")
    return parsed.isoformat()


_DURATION = re.compile(r"^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$",
                       re.IGNORECASE)


def normalise_duration(value: Any) -> Any:
    """An ISO 8601 duration without years or months as whole seconds (``PT80M`` = ``P0DT1H20M0S``).

    >>> normalise_duration("PT80M") == normalise_duration("P0DT1H20M0S") == "4800s"
    True
    """
    if value is None:
        return None
    text = _text(value)
    match = _DURATION.match(text)
    if not match or text.upper() in ("P", "PT"):
        return normalise_value(text)
    days, hours, minutes, seconds = (Decimal(g) if g else Decimal(0) for g in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return f"{normalise_value(total)}s"


def normalise_number(value: Any) -> Any:
    """A number written with thousands separators or a decimal comma ("1 234,5"), as plain digits.

    >>> normalise_number("1 234,5"), normalise_number("4.6 out of 5"), normalise_number("n/a")
    ('1234.5', '4.6', 'n/a')
    """
    if value is None or isinstance(value, bool | int | float | Decimal):
        return normalise_value(value)
    text = _text(value)
    if not text:
        return None
    try:
        return normalise_value(Decimal(text))
    except InvalidOperation:
        pass
    from price_parser import Price

    amount = Price.fromstring(text).amount
    return normalise_value(amount) if amount is not None else normalise_value(text)


def normalise_plain_text(value: Any) -> Any:
    """Whitespace collapsed, nothing else: for values that look like numbers but are not ("007")."""
    return None if value is None else _text(value)


FIELD_KINDS = {"auto": normalise_value, "text": normalise_plain_text, "price": normalise_price,
               "availability": normalise_availability, "date": normalise_date, "duration": normalise_duration,
               "number": normalise_number}

# schema.org properties whose meaning is fixed by the vocabulary: their kind needs no telling.
_SCHEMA_KINDS = {
    "price": "price", "lowprice": "price", "highprice": "price", "minprice": "price", "maxprice": "price",
    "availability": "availability", "startdate": "date", "enddate": "date", "datepublished": "date",
    "datemodified": "date", "datecreated": "date", "validfrom": "date", "validthrough": "date",
    "pricevaliduntil": "date", "availabilitystarts": "date", "availabilityends": "date",
    "totaltime": "duration", "cooktime": "duration", "preptime": "duration", "duration": "duration",
    "ratingvalue": "number", "reviewcount": "number", "ratingcount": "number",
}


def infer_kind(path: str) -> str:
    """The kind of a schema.org property path (its last segment), ``auto`` when it has none.

    >>> infer_kind("offers.price"), infer_kind("offers.availability"), infer_kind("name")
    ('price', 'availability', 'auto')
    """
    first = path.split("|", 1)[0].strip()  # "offers.price|offers.lowPrice": alternatives of one kind
    return _SCHEMA_KINDS.get(first.rsplit(".", 1)[-1].lower(), "auto")


def normalise_field(value: Any, kind: str = "auto") -> Any:
    """*value* normalised as a *kind* (one of :data:`FIELD_KINDS`); lists element by element."""
    if isinstance(value, list | tuple):
        return [normalise_field(v, kind) for v in value]
    if isinstance(value, Mapping):
        return normalise_value(value)
    try:
        normaliser = FIELD_KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown field kind {kind!r}; known: {', '.join(sorted(FIELD_KINDS))}") from None
    return normaliser(value)


def normalise_fields(fields: Mapping[str, Any], kinds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every field normalised by its kind (``auto`` when *kinds* does not name it)."""
    kinds = kinds or {}
    return {name: normalise_field(value, kinds.get(name, "auto")) for name, value in fields.items()}
