"""Dates and relative times in the languages of the pages changewatch is tested on besides English
(the corpus: German, French, Spanish, Portuguese, Dutch, Polish, Czech, Slovak, Romanian, Finnish,
Estonian, Russian, Hebrew, Arabic, Bengali, Chinese, Japanese), as volatile patterns for
:mod:`changewatch.core.text.volatile`, which runs them over a lower-cased copy of the text (they are
written in lower case; no flag to ignore case) and cuts what they match from the text as written.

A month or weekday name is removed only next to a number (a day, a year, a time): on its own it
is a word like any other ("Mai", "mars", "domingo", "sobota" are names and nouns too). Chinese
and Japanese dates are numeric (``2026年11月30日``), which is language-independent. Relative times
are a number with a unit and the language's word for "ago" (``vor 5 Minuten``, ``5 minut temu``,
``3時間前``); the unit is one of the language's time units (stems with any ending: "\\w" stops
inside a Bengali word), never any word: "Il y a 3 exemplaires", "Acum 199 lei" are content.
French clock times ("10h30") are removed wherever they stand: a battery's "Autonomie 10h30" is
taken for a time too (a known loss: a change of it alone is not seen).

Each pattern comes with the words one of which every match contains (``OTHER_LANGUAGES_NEEDS``):
a pattern is not run over text that has none of them, which is what keeps these patterns cheap
(``()``: always run over the lines that hold a digit). The two that start with a name (a weekday
before a number, a month before a year) are tried only where one of their names is the word
before a number (a frozenset of names: :func:`name_starts`): scanning every position of a page
with a hundred names cost 0.4 ms a corpus page each, and 5 ms for a megabyte of HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["DAY_FIRST", "OTHER_LANGUAGES", "OTHER_LANGUAGES_NEEDS", "WEEKDAY_WORDS", "name_starts",
           "words_before_numbers"]

# Month names as dates write them (the genitive or partitive where a language declines them).
_MONTH_NAMES = {
    "de": "januar jänner februar märz april mai juni juli august september oktober november dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia"
          " styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik listopad grudzień",
    "cs": "ledna února března dubna května června července srpna září října listopadu prosince"
          " leden únor březen duben květen červen červenec srpen říjen prosinec",
    "sk": "januára februára marca apríla mája júna júla augusta septembra októbra novembra decembra"
          " január február marec apríl máj jún júl október",
    "ro": "ianuarie februarie martie aprilie mai iunie iulie august septembrie octombrie noiembrie decembrie",
    "fi": "tammikuuta helmikuuta maaliskuuta huhtikuuta toukokuuta kesäkuuta heinäkuuta elokuuta syyskuuta"
          " lokakuuta marraskuuta joulukuuta tammikuu helmikuu maaliskuu huhtikuu toukokuu kesäkuu heinäkuu"
          " elokuu syyskuu lokakuu marraskuu joulukuu",
    "et": "jaanuar veebruar märts aprill mai juuni juuli august september oktoober november detsember",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря"
          " январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
    # Hebrew dates put "ב" (in) before the month: "30 בנובמבר 2026"
    "he": "ינואר פברואר מרץ אפריל מאי יוני יולי אוגוסט ספטמבר אוקטובר נובמבר דצמבר",
    "ar": "يناير فبراير مارس أبريل ابريل مايو يونيو يوليو أغسطس اغسطس سبتمبر أكتوبر اكتوبر نوفمبر ديسمبر"
          " شباط آذار نيسان أيار حزيران تموز آب أيلول",
    "bn": "জানুয়ারি ফেব্রুয়ারি মার্চ এপ্রিল মে জুন জুলাই আগস্ট সেপ্টেম্বর অক্টোবর নভেম্বর ডিসেম্বর",
}
# Abbreviations after a day only ("30. Okt."), and only those that are no word of their own
# ("2 out of 3", "5 set", "3 mar" are not dates: English already has jan, feb… dec).
_MONTH_ABBREVIATIONS = {"de": "jän mär okt dez", "fr": "janv févr avr juil déc", "nl": "mrt", "pt": "fev"}
_WEEKDAY_NAMES = {
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "es": "lunes martes miércoles jueves viernes sábado domingo",
    "pt": "segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo",
    "nl": "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
    "pl": "poniedziałek wtorek środa czwartek piątek sobota niedziela",
    "cs": "pondělí úterý středa čtvrtek pátek sobota neděle",
    "sk": "pondelok utorok streda štvrtok piatok sobota nedeľa",
    "ro": "luni marți marţi miercuri joi vineri sâmbătă duminică",
    "fi": "maanantai tiistai keskiviikko torstai perjantai lauantai sunnuntai",
    "et": "esmaspäev teisipäev kolmapäev neljapäev reede laupäev pühapäev",
    "ru": "понедельник вторник среда четверг пятница суббота воскресенье",
    "ar": "الاثنين الإثنين الثلاثاء الأربعاء الخميس الجمعة السبت الأحد",
    "bn": "সোমবার মঙ্গলবার বুধবার বৃহস্পতিবার শুক্রবার শনিবার রবিবার",
}


def _trie(words: list[str]) -> str:
    """One regex matching any of *words*, shared prefixes written once ("ma(?:i|rs|rzo)"): a
    plain alternation of a hundred names tries each one at every position, ten times slower."""
    if words == [""]:
        return ""
    by_first: dict[str, list[str]] = {}
    for word in words:
        if word:
            by_first.setdefault(word[0], []).append(word[1:])
    branches = [re.escape(first) + _trie(rest) for first, rest in sorted(by_first.items())]
    if len(branches) == 1 and "" not in words:
        return branches[0]
    return "(?:" + "|".join(branches) + ")" + ("?" if "" in words else "")


def _alternation(names: dict[str, str], without: frozenset[str] = frozenset()) -> str:
    return "(?:" + _trie(sorted({w for text in names.values() for w in text.split()} - without)) + ")"


# Before a year, the English patterns take the names English shares ("November 2026" in Dutch,
# German, Estonian, Slovak): left out here, a page with English dates does not run this one too.
_ENGLISH_MONTHS = frozenset("january february march april may june july august september october november december"
                            .split())
_MONTHS_BEFORE_YEAR = sorted({w for t in _MONTH_NAMES.values() for w in t.split()} - _ENGLISH_MONTHS)
_MONTHS = "(?:" + _trie(_MONTHS_BEFORE_YEAR) + ")"
# Month names that are common words too, in a language covered or in English: "Pack of 3 Mars
# bars", Romanian "5 mai multe" (5 more), Spanish/Portuguese "5 marca" (brand), "5 maj" (the
# Polish nominative, which dates do not use after a day). After a day they are a date only with
# a year after them ("5 mai 2026", "30 mars 2026") or a dot after the day ("5. Mai"): "le 30
# mars" alone stays in the text. Checked and left out: "mayo" ("2 de mayo" is a date), "luty",
# "mei", "august" (English takes "5 august" anyway), "מרץ", "مارس" (rare after a number).
_AMBIGUOUS_MONTHS = frozenset({"mars", "mai", "maj", "marca"})
_MONTHS_AFTER_DAY = _alternation({**_MONTH_NAMES, "abbreviations": " ".join(_MONTH_ABBREVIATIONS.values())},
                                 without=_AMBIGUOUS_MONTHS)
_AMBIGUOUS = "(?:" + "|".join(sorted(_AMBIGUOUS_MONTHS)) + ")"
# Hebrew weekdays are ordinals ("שני": second, Monday) unless "יום" (day) precedes them
_HEBREW_ORDINALS = "ראשון שני שלישי רביעי חמישי שישי שבת"
_HEBREW_WEEKDAYS = r"יום\s+(?:" + _HEBREW_ORDINALS.replace(" ", "|") + ")"
# What the two patterns that start with a name need right before a number
_WEEKDAY_WORDS = frozenset(" ".join([*_WEEKDAY_NAMES.values(), _HEBREW_ORDINALS]).split())
#: The weekday names of the languages besides English
WEEKDAY_WORDS = frozenset(" ".join(_WEEKDAY_NAMES.values()).split())
_BEFORE_NUMBER = re.compile(r" +(?:de +)?(?=\d)")
_OPENING = "([{\"'«„“\u201a\u2018"


def _words_before_numbers(text: str) -> Iterator[tuple[int, str]]:
    """Where each word of *text* (lower case) that a number follows starts, and the word, trimmed
    of the punctuation a date puts around it ("(lundi 30" → "lundi", "montag, 30" → "montag").
    Cheap: the regex engine looks for a space, and a page's lines with digits hold a few hundred
    numbers."""
    for match in _BEFORE_NUMBER.finditer(text):
        end = match.start()
        start = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end)) + 1
        word = text[start:end].rstrip(".,")
        trimmed = word.lstrip(_OPENING)
        yield start + len(word) - len(trimmed), trimmed


def words_before_numbers(text: str) -> set[str]:
    """The words of *text* (lower case) that a number follows (see _words_before_numbers)."""
    return {word for _, word in _words_before_numbers(text)}


def name_starts(text: str, names: frozenset[str]) -> Iterator[int]:
    """Where a match of a pattern that starts with one of *names* can start in *text*: at each of
    those names that a number follows, and at the word before it ("יום שני, 30")."""
    for start, word in _words_before_numbers(text):
        if word in names:
            if start > 1 and text[start - 1] == " ":
                yield max(text.rfind(" ", 0, start - 1), text.rfind("\n", 0, start - 1)) + 1
            yield start

_WEEKDAYS = _alternation(_WEEKDAY_NAMES)
# A name ends where the next character is not a letter: "\b" fails after a Bengali vowel sign.
_END = r"(?!\w)"
# "2026 r." (Polish), the same with a Cyrillic letter (Russian, U+0433), "2026年"
_YEAR = r"\d{4}(?!\d)(?:\s+r\.|\s+\u0433\.?|\s*年)?"

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

#: How many of the patterns (the first) run before the English written dates.
DAY_FIRST = 2
OTHER_LANGUAGES: tuple[str, ...] = (
    # "Montag, 30.", "lundi 30 novembre", "יום שני, 30": a weekday before a number (first:
    # the date after it goes next)
    rf"\b(?:{_WEEKDAYS}|{_HEBREW_WEEKDAYS}){_END}\.?,?(?=\s*\d)",
    # "30. November 2026", "30 de noviembre de 2026", "30 listopada 2026 r.", "30 בנובמבר", "৩০ নভেম্বর"
    # ("5. Mai", "5 mai 2026", not "5 mai multe": _AMBIGUOUS_MONTHS)
    rf"\d{{1,2}}(?:\.?\s+(?:de\s+)?ב?{_MONTHS_AFTER_DAY}{_END}\.?(?:,?\s+(?:de\s+)?{_YEAR})?"
    rf"|\.\s+{_AMBIGUOUS}{_END}\.?(?:,?\s+{_YEAR})?|\s+{_AMBIGUOUS}{_END},?\s+{_YEAR})",
    # "Dezember 2026", "noviembre de 2026", "listopad 2026"
    rf"\b{_MONTHS}{_END}\.?\s+(?:de\s+)?{_YEAR}",
    # Chinese and Japanese dates and weekdays: 2026年11月30日, 11月30日(月), 星期一, 月曜日
    # (one digit first, without alternatives before it: the regex engine then skips to digits)
    r"\d\d{0,3}(?:年\d{1,2}月(?:\d{1,2}日)?|月\d{1,2}日(?:\s*[(\uff08][月火水木金土日][)\uff09])?)",
    r"星期[一二三四五六日天]|[月火水木金土日]曜日",
    # French, Spanish and Portuguese clock times: "10h30"
    r"\d{1,2}h[0-5]\d(?!\w)",
    # relative times, the marker before the number: "vor 5 Minuten", "il y a 3 heures", "hace 2 días",
    # "há 2 horas", "před 5 minutami", "pred 5 minútami", "acum 5 minute", "לפני 5 דקות", "منذ 5 دقائق"
    # (only with a time unit: "Il y a 3 exemplaires", "Acum 199 lei", "vor 14 Uhr" are content)
    _RELATIVE_BEFORE,
    # and after it: "5 minuten geleden", "5 minut temu", "5 минут назад", "5 minuuttia sitten",
    # "5 minutit tagasi", "৫ মিনিট আগে" ("10 eurot tagasi" is content)
    _RELATIVE_AFTER,
    # Chinese and Japanese write it without spaces: "5分钟前", "3 小时前", "3時間前"
    # (a unit, not any word: "库存100件前" is content)
    r"\d+\s*(?:秒钟?|分钟|分鐘|分|个?小时|個?小時|時間|天|日|周|週間?|星期|[个個ヶかカヵ]月|年)前",
)
OTHER_LANGUAGES_NEEDS: tuple[tuple[str, ...] | frozenset[str], ...] = (
    _WEEKDAY_WORDS, (), frozenset(_MONTHS_BEFORE_YEAR),
    ("年", "月"), ("星期", "曜日"), ("h",),
    tuple(_TIME_UNITS_BEFORE), tuple(_TIME_UNITS_AFTER), ("前",),
)
