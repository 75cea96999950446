"""The words a busy page's furniture is made of: pools of headlines, related stories and ad
phrases large enough that almost every item is new on every load (a box of five drawn from
several hundred), deterministic from a seed. Real English words, so a headline is a line of text
like any other: nothing a pattern could recognise as noise."""

from __future__ import annotations

import random

__all__ = ["ad_phrase", "furniture_kind", "headline_pool", "related_pool", "sentence"]

_SUBJECTS = [
    "City council", "Local farmers", "Harbour workers", "The central bank", "Rail operators", "Volunteers",
    "A village bakery", "Museum curators", "Climate scientists", "Teachers", "Hospital staff", "A startup",
    "Fishermen", "The football club", "Tenants", "Wine growers", "Astronomers", "A pop singer", "Cyclists",
    "The mayor", "Librarians", "Beekeepers", "Lawmakers", "A chess prodigy", "Firefighters", "Archaeologists",
    "Truck drivers", "An orchestra", "Students", "Nurses", "Shopkeepers", "The zoo", "Engineers", "Pilots",
]
_VERBS = [
    "unveil", "reject", "celebrate", "question", "rethink", "rescue", "discover", "protest against",
    "vote on", "invest in", "warn about", "sell", "rebuild", "restore", "abandon", "defend", "test",
    "launch", "cancel", "double", "explore", "welcome", "win", "lose",
]
_OBJECTS = [
    "a floating garden", "the old lighthouse", "plans for a tramway", "a record harvest", "the night market",
    "a forgotten manuscript", "cheaper bus fares", "a solar rooftop scheme", "the winter festival",
    "a rare orchid", "the river crossing", "a new school timetable", "the marathon route", "an ice rink",
    "a community orchard", "the ferry service", "a robot barista", "the town clock", "a jazz archive",
    "a wildlife bridge", "the summer camp", "a vintage tram", "an urban vineyard", "the public pool",
    "a mountain hut", "the flower show", "a bicycle lane", "the chess tournament", "an open library",
    "a meteor shower guide", "the harbour wall", "a seaweed farm",
]
_TAILS = ["", "", "", " after years of delay", " despite the rain", " amid fierce debate", " for the first time",
          " at dawn", " with a twist", " on a shoestring"]

_RELATED_LEADS = [
    "Why", "How", "What it means that", "Inside the story:", "Analysis:", "Explainer:", "Opinion:",
    "Watch:", "In pictures:", "Q&A:",
]

_OFFERS = ["Save big on", "Discover", "Try", "Upgrade to", "Treat yourself to", "Now in stock:", "Last chance for",
           "Meet", "Switch to", "Get"]
_ADJECTIVES = ["cosy", "handmade", "organic", "wireless", "foldable", "vintage", "waterproof", "silent", "smart",
               "ergonomic", "hand-painted", "recycled", "lightweight", "artisan", "heated", "Nordic", "Italian",
               "bamboo", "copper", "velvet"]
_PRODUCTS = ["wool blankets", "espresso makers", "garden chairs", "running shoes", "desk lamps", "travel mugs",
             "reading glasses", "yoga mats", "kitchen knives", "rain jackets", "headphones", "teapots",
             "suitcases", "bookshelves", "scented candles", "bird feeders", "cutting boards", "sunglasses",
             "backpacks", "winter boots", "picnic baskets", "alarm clocks", "pillows", "kettles", "umbrellas"]
_ENDINGS = ["from our partners", "delivered tomorrow", "while stocks last", "with free returns",
            "in every colour", "for the whole family", "made to last", "at members' prices", "this weekend only",
            "near you"]

_SENTENCE_WORDS = [
    "The", "committee", "approved", "a", "footbridge", "over", "the", "canal", "beside", "northern", "quay",
    "and", "promised", "lanterns", "along", "its", "railing", "before", "autumn", "residents", "gathered",
    "to", "applaud", "engineers", "who", "designed", "graceful", "arch", "from", "reclaimed", "timber",
]


def headline_pool(seed: int, size: int = 600) -> list[str]:
    """*size* distinct headlines (at most the product of the word lists)."""
    rng = random.Random(f"headlines:{seed}")
    seen: dict[str, None] = {}
    limit = len(_SUBJECTS) * len(_VERBS) * len(_OBJECTS)
    while len(seen) < min(size, limit):
        seen[f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{rng.choice(_TAILS)}"] = None
    return list(seen)


def related_pool(seed: int, size: int = 300) -> list[str]:
    """*size* distinct related-story titles (another pool than the headlines')."""
    rng = random.Random(f"related:{seed}")
    headlines = headline_pool(seed + 1, size * 2)
    seen: dict[str, None] = {}
    while len(seen) < size:
        seen[f"{rng.choice(_RELATED_LEADS)} {rng.choice(headlines).lower()}"] = None
    return list(seen)


def ad_phrase(rng: random.Random) -> str:
    """A sponsored line, new on (almost) every call: ~50,000 combinations."""
    return f"{rng.choice(_OFFERS)} {rng.choice(_ADJECTIVES)} {rng.choice(_PRODUCTS)} {rng.choice(_ENDINGS)}"


def sentence(rng: random.Random, words: int = 14) -> str:
    """A plausible-looking sentence of words no busy-page furniture uses."""
    body = " ".join(rng.choice(_SENTENCE_WORDS[1:]) for _ in range(words - 1))
    return f"{_SENTENCE_WORDS[0]} {body}."


_KINDS = (
    (("Updated", "minutes ago"), "clock"),
    (("Subscribe", "morning brief"), "A/B teaser"),
    (("readers", "Comments ("), "counter"),
    (("Live:",), "block on some loads"),
    (("Sign up for our newsletter",), "block on some loads"),
    (("Trending now", "Related stories", "Sponsored"), "box heading"),
    (tuple(f"{lead} " for lead in _RELATED_LEADS), "related list"),
    (tuple(_PRODUCTS), "ad slot"),
    (tuple(f"{s} " for s in _SUBJECTS), "trending box"),
)


def furniture_kind(line: str) -> str:
    """Which furniture a line of a busy page is ("page's own" when it is none)."""
    for marks, kind in _KINDS:
        if any(mark in line for mark in marks):
            return kind
    return "page's own"
