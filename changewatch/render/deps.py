"""A rendered page's dependency set: what its content was made from, and whether it is unchanged.

A rendered page is a function of the responses its browser was given: the document (embedded
JSON state included), its scripts, the documents of its frames and the data its scripts fetched.
Each is kept with what tells a later visit it is the same: its status, the URL redirects led to,
the SHA-256 of its body, and its ETag/Last-Modified for a conditional re-check. Responses that
cannot change the page's text (images, fonts, media, stylesheets...) are not dependencies.

Pure: no Scrapy, no Playwright. The store keeps a set as the text :meth:`DependencySet.encode`
makes, in the key's validators row (written in the observation's own transaction).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["NOT_DEPENDENCIES", "Dependency", "DependencySet", "is_dependency", "unchanged"]

FORMAT = 1
#: resource types whose responses cannot change the DOM's text
NOT_DEPENDENCIES = frozenset({"image", "media", "font", "stylesheet", "texttrack", "manifest", "ping", "cspreport",
                              "beacon"})


def is_dependency(resource_type: str) -> bool:
    """Unknown types count: a new kind of request is re-checked rather than ignored."""
    return resource_type not in NOT_DEPENDENCIES


@dataclass(frozen=True, slots=True)
class Dependency:
    url: str  # as the page asked for it
    type: str  # Playwright's resource type (document, script, xhr, fetch...)
    status: int
    sha256: str  # of the body as the browser was given it (decompressed)
    final_url: str | None = None  # where redirects led; None: *url* itself
    etag: str | None = None
    last_modified: str | None = None
    #: request headers the page's script set, which the server may answer by (X-Requested-With…)
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def revalidates(self) -> bool:
        """A conditional re-check is possible (validators, and no redirect in between)."""
        return self.final_url is None and (self.etag is not None or self.last_modified is not None)


@dataclass(frozen=True, slots=True)
class DependencySet:
    """*options*: the render options' fingerprint; *unknown*: why this set cannot be re-checked
    (a POST, a request still running, a response that failed…): the page is rendered every
    time; *confirmed*: the set is the one the previous render found too (False: the page asks
    for other URLs on other loads, so the next visit renders again to see)."""

    options: str
    deps: tuple[Dependency, ...] = ()
    unknown: str | None = None
    confirmed: bool = True
    urls: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "urls", frozenset(d.url for d in self.deps))

    def after(self, previous: DependencySet | None) -> DependencySet:
        """This set as the previous render's makes it: confirmed when the page asked for the same
        URLs, or when it is the first (the first render is trusted: every later render checks)."""
        return replace(self, confirmed=previous is None or previous.urls == self.urls)

    def encode(self) -> str:
        deps = [{k: v for k, v in (("url", d.url), ("type", d.type), ("status", d.status), ("sha256", d.sha256),
                                   ("final_url", d.final_url), ("etag", d.etag), ("last_modified", d.last_modified),
                                   ("headers", [list(h) for h in d.headers] or None)) if v is not None}
                for d in self.deps]
        return json.dumps({"v": FORMAT, "options": self.options, "unknown": self.unknown,
                           "confirmed": self.confirmed, "deps": deps}, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def decode(cls, text: str | None) -> DependencySet | None:
        """A stored set, or None for nothing, another format or garbage (then: render)."""
        if not text:
            return None
        try:
            data: Any = json.loads(text)
            if data.get("v") != FORMAT:
                return None
            deps = tuple(Dependency(str(d["url"]), str(d["type"]), int(d["status"]), str(d["sha256"]),
                                    d.get("final_url"), d.get("etag"), d.get("last_modified"),
                                    tuple((str(n), str(v)) for n, v in d.get("headers") or ()))
                         for d in data["deps"])
            return cls(str(data["options"]), deps, data.get("unknown"), bool(data.get("confirmed", False)))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def unchanged(dep: Dependency, *, status: int, url: str, sha256: str | None, validated: bool) -> bool:
    """Whether a re-check's answer says *dep* is what the last render was given: a 304 to its own
    validators (*validated*: they were sent), or the same status, final URL and body hash.

    >>> d = Dependency("https://a.example/api", "fetch", 200, "ab", etag='"1"')
    >>> unchanged(d, status=304, url=d.url, sha256=None, validated=True)
    True
    >>> unchanged(d, status=200, url=d.url, sha256="cd", validated=True)
    False
    """
    if status == 304:
        return validated and url == dep.url
    return status == dep.status and url == (dep.final_url or dep.url) and sha256 == dep.sha256
