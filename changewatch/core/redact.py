"""A deterministic redactor: what a page's diff must not carry off the machine (to a language
model's endpoint). Emails, phone numbers, payment card numbers (Luhn-checked), IBANs (mod-97
checked), API keys and tokens are replaced by a bracketed word saying what stood there; prices,
dates, times, SKUs and ordinary numbers are left as written. No Scrapy, no network.

It errs on the side of removing: a 40-character random-looking string is taken for a secret
even if it was a harmless id, because a summary loses nothing by not seeing it.

>>> redact("Write to jane.doe@example.com or call +44 20 7946 0958; price €1,299.00 on 2026-11-30")
'Write to [email] or call [phone]; price €1,299.00 on 2026-11-30'
>>> redact("card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SKU KT-2000-BLK")
'card [card], IBAN [iban], SKU KT-2000-BLK'
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

__all__ = ["luhn_valid", "iban_valid", "redact"]

EMAIL, PHONE, CARD, IBAN, SECRET = "[email]", "[phone]", "[card]", "[iban]", "[secret]"

# -- secrets: tokens of known shapes first, then key=value pairs, then anything random-looking --------------------

_KNOWN_TOKENS = re.compile("|".join((
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT
    r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}",  # OpenAI, Anthropic and similar keys
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{22,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",  # AWS access key ids
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}",  # Stripe
)))
#: "Authorization: Bearer abc…", "token abc…": the word stays, what follows it goes
_SCHEMES = re.compile(r"(?i)\b(bearer|basic|token)(\s+)([A-Za-z0-9._~+/-]{12,}=*)")
#: api_key=…, "password": "…", secret: … (the name stays)
_PAIRS = re.compile(r"(?i)\b([A-Za-z0-9_-]*(?:key|token|secret|password|passwd|pwd|session|sid))"
                    r"(\"?\s*[:=]\s*[\"']?)([^\s\"'&,;<>]{6,})")
#: a long run of token characters: a secret when it looks random (below)
_LONG = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/_=-])")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _random_looking(token: str) -> bool:
    """A long hex string with letters and digits (a digest, a key), or base64 with upper, lower
    and digits mixed as random text mixes them (not a slug of words, not a long number)."""
    body = token.rstrip("=")
    if _HEX.match(body):
        return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)
    digits = sum(c.isdigit() for c in body)
    upper = sum(c.isupper() for c in body)
    lower = sum(c.islower() for c in body)
    if min(digits, upper, lower) < 2:
        return False
    longest_word = max((len(w) for w in re.findall(r"[A-Za-z]+", body)), default=0)
    return longest_word < 16 and _entropy(body) >= 4.0


def _secrets(text: str) -> str:
    text = _KNOWN_TOKENS.sub(SECRET, text)
    text = _SCHEMES.sub(lambda m: f"{m[1]}{m[2]}{SECRET}", text)
    text = _PAIRS.sub(lambda m: f"{m[1]}{m[2]}{SECRET}", text)
    return _LONG.sub(lambda m: SECRET if _random_looking(m[0]) else m[0], text)


# -- emails -------------------------------------------------------------------------------------------------------

_EMAIL = re.compile(r"(?<![\w.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])")

# -- IBANs and payment cards, each checked by its check digits ------------------------------------------------------

_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")


def iban_valid(candidate: str) -> bool:
    """ISO 13616's check: the IBAN, its first four characters moved to its end and letters
    read as 10 to 35, is 1 modulo 97.

    >>> iban_valid("DE89370400440532013000"), iban_valid("DE89370400440532013001")
    (True, False)
    """
    compact = candidate.replace(" ", "")
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    moved = compact[4:] + compact[:4]
    try:
        return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1
    except ValueError:
        return False


def _iban(match: re.Match[str]) -> str:
    text = match[0]
    # the pattern may have taken a word after the IBAN: try shorter ends, a group at a time
    for end in range(len(text), 14, -1):
        if (end == len(text) or text[end] == " ") and iban_valid(text[:end]):
            return IBAN + text[end:]
    return text


#: 13 to 19 digits together, or grouped as cards print them (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4)
_CARD = re.compile(r"(?<![\w.,/+-])(?:[2-6]\d{12,18}|[2-6]\d{3}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?"
                   r"|3\d{3}([ -])\d{6}\2\d{4,5})(?![ -]?\d|\w|[.,/]\d)")


def luhn_valid(digits: str) -> bool:
    """The Luhn check of payment card numbers.

    >>> luhn_valid("4111111111111111"), luhn_valid("4111111111111112")
    (True, False)
    """
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    text = match[0]
    return CARD if luhn_valid(re.sub(r"[ -]", "", text)) else text


# -- phone numbers: international (+…), North American, or labelled as one -----------------------------------------

_PHONE_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){2,6}(?![\w])")
_PHONE_NANP = re.compile(r"(?<![\w.-])(?:\(\d{3}\) ?|\d{3}[.-])\d{3}[.-]\d{4}(?![\w.-]|\.\d)")
_PHONE_LABELLED = re.compile(r"(?i)\b(tel|tél|phone|telephone|telefon|telefono|teléfono|mobile|mobil|cell|fax)"
                             r"(\.?\s*(?:no\.?|nr\.?)?\s*[:.]?\s*)(\+?\(?\d[\d ()./-]{4,20}\d)")
_PHONE_URI = re.compile(r"(?i)\btel:\+?[\d().-]{5,20}")


def _digits(text: str) -> int:
    return sum(c.isdigit() for c in text)


def _phones(text: str) -> str:
    text = _PHONE_URI.sub(PHONE, text)
    text = _PHONE_INTERNATIONAL.sub(lambda m: PHONE if 8 <= _digits(m[0]) <= 15 else m[0], text)
    text = _PHONE_NANP.sub(PHONE, text)
    return _PHONE_LABELLED.sub(lambda m: f"{m[1]}{m[2]}{PHONE}" if 6 <= _digits(m[3]) <= 15 else m[0], text)


_STEPS: tuple[Callable[[str], str], ...] = (
    _secrets,
    lambda text: _EMAIL.sub(EMAIL, text),
    lambda text: _IBAN.sub(_iban, text),
    lambda text: _CARD.sub(_card, text),
    _phones,
)


def redact(text: str) -> str:
    """*text* with emails, phone numbers, card numbers, IBANs, API keys and tokens replaced by
    ``[email]``, ``[phone]``, ``[card]``, ``[iban]`` and ``[secret]``; everything else as written."""
    for step in _STEPS:
        text = step(text)
    return text
