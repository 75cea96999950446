"""Canonical URLs: the identity of entities and the default key of a watch."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["TRACKING_PARAMS", "canonical_url", "is_tracking_param", "path_without_session", "shown_url"]

# Parameters that identify a visit, a campaign or a session, never the thing itself.
TRACKING_PARAMS = frozenset(
    """fbclid gclid gclsrc dclid gbraid wbraid msclkid yclid twclid ttclid li_fat_id igshid
    mc_cid mc_eid _ga _gl _hsenc _hsmi __hssc __hstc __hsfp hsctatracking mkt_tok oly_anon_id
    oly_enc_id rb_clickid s_cid vero_id vero_conv wickedid ef_id srsltid spm scm _openstat
    jsessionid phpsessid aspsessionid cfid cftoken sessionid sid""".split()
)
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "ga_", "hsa_", "_branch")
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sessionid|sid)=[^/?#]*", re.IGNORECASE)


def is_tracking_param(name: str) -> bool:
    """Whether a query parameter of this name identifies a visit, a campaign or a session."""
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(_TRACKING_PREFIXES)


def path_without_session(path: str) -> str:
    """*path* less a ``;jsessionid=…`` (or PHP, ASP, plain) session id."""
    return _PATH_SESSION.sub("", path)


def canonical_url(url: str, *, keep: Iterable[str] = (), drop: Iterable[str] = ()) -> str:
    """*url* canonicalised (w3lib: sorted query, no fragment, normalised escapes; lower-case
    scheme and host, no default port) with tracking and session parameters removed.

    *keep* names parameters to keep even though they look like tracking ones; *drop* names
    more parameters to remove (for example a site's own ``ref``). Raises ValueError (and
    nothing else) for text that cannot be split into a URL, such as ``http://[oops``.

    >>> canonical_url("HTTPS://Shop.example:443/p/1;jsessionid=AB12?utm_source=x&b=2&a=1#top")
    'https://shop.example/p/1?a=1&b=2'
    """
    keep_set = {k.lower() for k in keep}
    drop_set = {d.lower() for d in drop}
    parts = urlsplit(url.strip())
    path = path_without_session(parts.path)
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() in keep_set or not (k.lower() in drop_set or is_tracking_param(k))
    ]
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    scheme = parts.scheme.lower()
    if port and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    rebuilt = urlunsplit((scheme, host, path or "/", urlencode(query), ""))
    from w3lib.url import canonicalize_url  # here: a worker process that keys no entity never needs it

    return canonicalize_url(rebuilt)


def shown_url(url: str) -> str:
    """*url* as an error message may quote it: no user name or password, at most 200 characters.

    >>> shown_url("ftp://user:secret@files.example/a")
    'ftp://files.example/a'
    """
    scheme, sep, rest = url.partition("://")
    if sep:
        netloc, slash, path = rest.partition("/")
        url = f"{scheme}{sep}{netloc.rpartition('@')[2]}{slash}{path}"
    return url if len(url) <= 200 else url[:199] + "…"
