"""Relative times in the languages of the pages changewatch is tested on besides English (the
corpus: German, French, Spanish, Portuguese, Dutch, Polish, Czech, Slovak, Romanian, Finnish,
Estonian, Russian, Hebrew, Arabic, Bengali, Chinese, Japanese), as volatile patterns for
:mod:`changewatch.core.text.volatile`, which runs them over a lower-cased copy of the text (they are
written in lower case; no flag to ignore case) and cuts what they match from the text as written.

A relative time is a number with a unit and the language's word for "ago" (``vor 5 Minuten``,
``5 minut temu``, ``3時間前``): it changes as the clock does while the page stays the same. The unit
is one of the language's time units (stems with any ending: "\\w" stops inside a Bengali word),
never any word: "Il y a 3 exemplaires", "Acum 199 lei" are content. Dates, weekdays and times of
day are content in every language (:mod:`.clock_times` says which times are a clock's).

Each pattern comes with the words one of which every match contains (``OTHER_LANGUAGES_NEEDS``): a
pattern is not run over text that has none of them, which is what keeps these patterns cheap.
"""

from __future__ import annotations

import re

__all__ = ["OTHER_LANGUAGES", "OTHER_LANGUAGES_NEEDS"]

# Relative times: each language's marker for "ago" and its time units, written as stems that any
# ending may follow (``[^\s\d.,:;]*``: "Minuten", "minutami", "минут"), or as whole words where a
# stem would be a prefix of ordinary words ("an" of "annonces", "dia" of "diamantes", "let" of
# "letadly"). Never "any word": "Il y a 3 exemplaires", "Há 5 unidades", "Acum 199 lei", "vor 14
# Uhr", "Saad 10 eurot tagasi", "Hace 2 goles" are content.
_WORD_END = r"(?!\w)"
_TIME_UNITS_BEFORE = {  # marker: units
    "vor": r"sek|min|std|stunde|tag|woche|monat|jahr",
    "il y a": rf"seconde|sec{_WORD_END}|minute|min{_WORD_END}|heure|h{_WORD_END}|jours?{_WORD_END}|semaine|mois"
              rf"|ans?{_WORD_END}|année",
    "hace": rf"segundo|seg{_WORD_END}|minuto|min{_WORD_END}|horas?{_WORD_END}|h{_WORD_END}|d[ií]as?{_WORD_END}"
            rf"|semana|mes(?:es)?{_WORD_END}|años?{_WORD_END}",
    "há": rf"segundo|seg{_WORD_END}|minuto|min{_WORD_END}|horas?{_WORD_END}|h{_WORD_END}|dias?{_WORD_END}"
          rf"|semana|m[eê]s(?:es)?{_WORD_END}|anos?{_WORD_END}",
    "před": rf"sekund|minut|min{_WORD_END}|hodin|dn|den{_WORD_END}|týdn|týden|měsíc|rok|let{_WORD_END}|lety",
    "pred": rf"sekund|min[úu]t|min{_WORD_END}|hodin|dň|dn|deň|týžd|mesiac|rok",
    "acum": rf"(?:de\s+)?(?:secund|minut|min{_WORD_END}|or[ăae]{_WORD_END}|zi(?:le)?{_WORD_END}|săptămân"
            rf"|lun[ăia]{_WORD_END}|luni{_WORD_END}|ani?{_WORD_END})",
    "לפני": "שני|דק|שע|יום|ימים|שבוע|חודש|שנה|שנים",
    "منذ": "ثاني|ثوان|دقيق|دقائق|ساع|يوم|أيام|ايام|أسبوع|اسبوع|أسابيع|شهر|أشهر|شهور|سنة|سنوات|سنين|عام|أعوام",
}
_TIME_UNITS_AFTER = {  # marker: units
    "geleden": rf"second|sec{_WORD_END}|minu|min{_WORD_END}|uur|dag|wee?k|maand|jaa?r",
    "temu": rf"sekund|minut|min{_WORD_END}|godz|dni{_WORD_END}|dzie[ńn]|tydz|tygod|miesi|rok|lat{_WORD_END}"
            rf"|lata{_WORD_END}",
    "назад": rf"сек|мин|час|ден|дн|недел|месяц|мес{_WORD_END}|год|лет{_WORD_END}",
    "sitten": rf"sekunt|minuut|min{_WORD_END}|tunti|tuntia|päivä|viikko|kuukau|kuukausi|vuosi|vuotta",
    "tagasi": rf"sekund|minut|min{_WORD_END}|tund|päev|nädal|kuu|aasta",
    "আগে": "সেকেন্ড|মিনিট|ঘণ্টা|ঘন্টা|দিন|সপ্তাহ|মাস|বছর",
}
_UNIT_ENDING = r"[^\s\d.,:;]*"
_RELATIVE_BEFORE = r"\b(?:" + "|".join(
    rf"{re.escape(marker).replace(chr(92) + ' ', ' ')}\s+\d+\s+(?:{units}){_UNIT_ENDING}"
    for marker, units in _TIME_UNITS_BEFORE.items()) + ")"
_RELATIVE_AFTER = r"\d+\s+(?:" + "|".join(
    rf"(?:{units}){_UNIT_ENDING}\.?\s+{marker}" for marker, units in _TIME_UNITS_AFTER.items()) + r")(?!\w)"

OTHER_LANGUAGES: tuple[str, ...] = (
    # the marker before the number: "vor 5 Minuten", "il y a 3 heures", "hace 2 días", "há 2 horas",
    # "před 5 minutami", "pred 5 minútami", "acum 5 minute", "לפני 5 דקות", "منذ 5 دقائق"
    # (only with a time unit: "Il y a 3 exemplaires", "Acum 199 lei", "vor 14 Uhr" are content)
    _RELATIVE_BEFORE,
    # and after it: "5 minuten geleden", "5 minut temu", "5 минут назад", "5 minuuttia sitten",
    # "5 minutit tagasi", "৫ মিনিট আগে" ("10 eurot tagasi" is content)
    _RELATIVE_AFTER,
    # Chinese and Japanese write it without spaces: "5分钟前", "3 小时前", "3時間前"
    # (a unit, not any word: "库存100件前" is content)
    r"\d+\s*(?:秒钟?|分钟|分鐘|分|个?小时|個?小時|時間|天|日|周|週間?|星期|[个個ヶかカヵ]月|年)前",
)
OTHER_LANGUAGES_NEEDS: tuple[tuple[str, ...], ...] = (tuple(_TIME_UNITS_BEFORE), tuple(_TIME_UNITS_AFTER), ("前",))
