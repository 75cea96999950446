"""Helpers shared by the core tests: generated prose and the real-page corpus (read in place,
never copied into the repository)."""

from __future__ import annotations

import csv
import os
import random
from pathlib import Path
from typing import Any

import pytest

# ../shared/corpus beside the checkout (where CI puts it too), unless CHANGEWATCH_CORPUS says otherwise
_DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "pages"
CORPUS_PAGES = Path(os.environ.get("CHANGEWATCH_CORPUS", str(_DEFAULT_CORPUS)))
CORPUS_SKIP_REASON = (
    f"real-page corpus not found at {CORPUS_PAGES} (set CHANGEWATCH_CORPUS to its pages/ folder)"
)

_CONSONANTS = "bcdfghjklprstvz"
_VOWELS = "aeiou"


def _pseudo_word(rng: random.Random) -> str:
    # Letters only, at least four of them: no digit for the id/date patterns to catch and no
    # three-letter word that could be a weekday or month abbreviation.
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4)))


def vocabulary(size: int = 2000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add(_pseudo_word(rng))
    return sorted(words)


def prose_words(count: int, seed: int = 1) -> list[str]:
    """*count* words of deterministic pseudo-prose."""
    rng = random.Random(seed)
    vocab = vocabulary()
    return [rng.choice(vocab) for _ in range(count)]


def prose_paragraphs(words: int = 3000, per_paragraph: int = 60, seed: int = 1) -> list[str]:
    flat = prose_words(words, seed)
    return [" ".join(flat[i : i + per_paragraph]) for i in range(0, len(flat), per_paragraph)]


def article_html(paragraphs: list[str], *, header: str = "", footer: str = "") -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        "<!doctype html><html><head><title>Generated article</title>"
        "<script>var tracker = 'abc';</script></head><body>"
        f"<header>{header}</header><main><article>{body}</article></main><footer>{footer}</footer>"
        "</body></html>"
    )


def require_corpus() -> Path:
    if not CORPUS_PAGES.is_dir():
        pytest.skip(CORPUS_SKIP_REASON)
    return CORPUS_PAGES


def corpus_cases(kind: str | None = None, count: int | None = None) -> list[Any]:
    """:func:`corpus_files` for ``pytest.mark.parametrize`` (called when the module is collected):
    without the corpus, one case that skips with the reason, not a module that cannot be collected."""
    if not CORPUS_PAGES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=CORPUS_SKIP_REASON))]
    return corpus_files(kind)[:count]


def corpus_files(kind: str | None = None) -> list[Path]:
    """Pages of the corpus (``kind``: article, structured or listing), from its MANIFEST.tsv
    when there is one, else by globbing."""
    root = require_corpus()
    manifest = next((m for m in (root / "MANIFEST.tsv", root.parent / "MANIFEST.tsv") if m.is_file()), None)
    files: list[Path] = []
    if manifest is not None:
        with manifest.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                path = manifest.parent / row["file"]
                if path.is_file() and (kind is None or row.get("kind") == kind):
                    files.append(path)
    if not files:
        pattern = {"article": "articles", "structured": "structured", "listing": "listings"}.get(kind or "", "*")
        files = sorted(root.glob(f"{pattern}/*.html"))
    if not files:
        pytest.skip(f"no {kind or ''} pages in the corpus at {root}")
    return sorted(files)


# One line per language of the corpus pages (their <html lang>), as two loads of a page would show
# it: the date, weekday or relative time differs, the rest is kept as written.
LANGUAGE_LINES = {  # two loads of one line: the same date, another relative time
    "en": ("Updated Monday, 30 November 2026, 5 minutes ago: Prices",
           "Updated Monday, 30 November 2026, 2 hours ago: Prices"),
    "de": ("Stand: Montag, 30. November 2026 - vor 5 Minuten: Preise",
           "Stand: Montag, 30. November 2026 - vor 2 Stunden: Preise"),
    "fr": ("Publié le lundi 30 novembre 2026 à 10h32 — il y a 3 heures : Prix",
           "Publié le lundi 30 novembre 2026 à 10h32 — il y a 2 jours : Prix"),
    "es": ("Actualizado el lunes, 30 de noviembre de 2026 (hace 5 minutos): Precios",
           "Actualizado el lunes, 30 de noviembre de 2026 (hace 2 horas): Precios"),
    "pt": ("Atualizado segunda-feira, 30 de novembro de 2026, há 3 horas: Preços",
           "Atualizado segunda-feira, 30 de novembro de 2026, há 1 dia: Preços"),
    "nl": ("Bijgewerkt maandag 30 november 2026, 5 minuten geleden: Prijzen",
           "Bijgewerkt maandag 30 november 2026, 2 uur geleden: Prijzen"),
    "pl": ("Aktualizacja: poniedziałek, 30 listopada 2026 r., 5 minut temu: Ceny",
           "Aktualizacja: poniedziałek, 30 listopada 2026 r., 2 godziny temu: Ceny"),
    "cs": ("Aktualizováno pondělí 30. listopadu 2026, před 5 minutami: Ceny",
           "Aktualizováno pondělí 30. listopadu 2026, před 2 hodinami: Ceny"),
    "sk": ("Aktualizované pondelok 30. novembra 2026, pred 5 minútami: Ceny",
           "Aktualizované pondelok 30. novembra 2026, pred 2 hodinami: Ceny"),
    "ro": ("Actualizat luni, 30 noiembrie 2026, acum 5 minute: Prețuri",
           "Actualizat luni, 30 noiembrie 2026, acum 2 ore: Prețuri"),
    "fi": ("Päivitetty maanantai 30. marraskuuta 2026, 5 minuuttia sitten: Hinnat",
           "Päivitetty maanantai 30. marraskuuta 2026, 2 tuntia sitten: Hinnat"),
    "et": ("Uuendatud esmaspäev, 30. november 2026, 5 minutit tagasi: Hinnad",
           "Uuendatud esmaspäev, 30. november 2026, 2 tundi tagasi: Hinnad"),
    "ru": ("Обновлено понедельник, 30 ноября 2026 г., 5 минут назад: Цены",  # noqa: RUF001
           "Обновлено понедельник, 30 ноября 2026 г., 2 часа назад: Цены"),  # noqa: RUF001
    "he": ("עודכן יום שני, 30 בנובמבר 2026, לפני 5 דקות: מחירים",
           "עודכן יום שני, 30 בנובמבר 2026, לפני 2 שעות: מחירים"),
    "ar": ("تم التحديث الاثنين 30 نوفمبر 2026، منذ 5 دقائق: الأسعار",
           "تم التحديث الاثنين 30 نوفمبر 2026، منذ 2 ساعات: الأسعار"),
    "bn": ("হালনাগাদ সোমবার ৩০ নভেম্বর ২০২৬, ৫ মিনিট আগে: দাম",
           "হালনাগাদ সোমবার ৩০ নভেম্বর ২০২৬, ২ ঘণ্টা আগে: দাম"),
    "zh": ("更新于 2026年11月30日 星期一 5分钟前：价格",  # noqa: RUF001
           "更新于 2026年11月30日 星期一 2小时前：价格"),  # noqa: RUF001
    "ja": ("更新 2026年11月30日（月曜日） 3時間前：価格",  # noqa: RUF001
           "更新 2026年11月30日（月曜日） 5分前：価格"),  # noqa: RUF001
}


#: fragments of lines: volatile ones of several languages, and words, numbers and separators
FRAGMENTS = ["montag", "30.", "November 2026", "10:32", "vor 5 Minuten", "5 minutes ago", "token=abc123",
             "il y a 3 jours", "Mon", "2026-11-30", "12/11/2026", "am", "pm", "Dec", "3rd", "hace 2 días", "30",
             "星期一", "2026年11月30日", "10h30", "sunday,", "today", "deadbeefdeadbeef0123", "Price 89.00",
             "abcdefghijklmnopqrstuvwxyz0123456789ab", "Terms of sale", "UPDATED:", "x", "·", "-", "|"]
