"""The report as one self-contained HTML page: inline CSS and SVG only, no script, no external
resource (a Content-Security-Policy says so to the browser too: were anything from a page ever to
slip through unescaped, it could not run or load). Written in pieces, in order, to a stream: the
summary and the sites first (small, from SQL counts and the health history), then the changes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from ..core.site_watches import SiteChanges
from ..store.health import FailingWatch, OpenCondition
from .charts import KIND_COLOURS, SiteHistory, kinds_chart, legend, noise_chart
from .render import link, text

__all__ = ["CSS", "ReportSummary", "changes_header", "closing", "opening", "site_watch_opening", "sites_html",
           "summary_html"]

CSS = """
:root{--ink:#0f172a;--mute:#475569;--line:#e2e8f0;--bg:#f8fafc}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--ink);background:var(--bg)}main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 12px;border-bottom:2px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:0 0 8px}h4{font-size:13px;margin:8px 0 4px;color:var(--mute)}
.sub{color:var(--mute);margin:0}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:110px}
.card b{display:block;font-size:22px}.card span{color:var(--mute)}
.badge{display:inline-block;border-radius:4px;padding:1px 7px;color:#fff;font-size:12px;font-weight:600;
text-transform:uppercase;letter-spacing:.03em;background:#64748b}
table{border-collapse:collapse;width:100%;background:#fff}td,th{border:1px solid var(--line);padding:4px 8px;
text-align:left;vertical-align:top}thead th{background:#f1f5f9;font-size:12px;color:var(--mute)}
.diff{table-layout:fixed;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.diff td{white-space:pre-wrap;overflow-wrap:anywhere;width:50%}.diff .del{background:#fef2f2}
.diff .ins{background:#f0fdf4}.diff .none{background:#f8fafc}.diff .same td{color:var(--mute)}
.diff .gap td{text-align:center;color:#94a3b8;background:#f8fafc}
td.del mark{background:#fecaca;color:#7f1d1d;text-decoration:line-through;text-decoration-thickness:1px}
td.ins mark{background:#bbf7d0;color:#14532d}mark{padding:0 1px;border-radius:2px}
.fields th[scope=row]{width:22%;font-family:ui-monospace,Menlo,monospace;font-weight:500}
.change{background:#fff;border:1px solid var(--line);border-left:5px solid #64748b;border-radius:8px;
padding:12px 16px;margin:14px 0}.change header{margin-bottom:8px}.change .url{margin-left:8px}
.facts{float:right;color:var(--mute);font-size:12px}.change footer{margin-top:8px;color:var(--mute);font-size:12px}
code{font:12px ui-monospace,Menlo,monospace;background:#f1f5f9;padding:1px 4px;border-radius:3px;
overflow-wrap:anywhere}.error{color:#991b1b;font-weight:500}.recovered{color:#166534}.meta{color:var(--mute)}
.entity-lists{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:10px}
.entities ul{margin:0;padding-left:18px}.entities.added li::marker{content:"+ ";color:#15803d}
.entities.removed li::marker{content:"\\2212  ";color:#b91c1c}.efields{color:var(--mute)}
.sites{display:grid;grid-template-columns:repeat(auto-fill,minmax(500px,1fr));gap:14px}
.site{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px}.site svg{width:100%;
height:auto;display:block;margin:2px 0 8px}
.site.warned{border-color:#fdba74;background:#fffbeb}.legend span{margin-right:12px;font-size:12px;color:var(--mute)}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.more{color:var(--mute);font-style:italic}.empty{background:#fff;border:1px dashed #94a3b8;border-radius:8px;
padding:16px;color:var(--mute)}.warn{color:#9a3412}a{color:#1d4ed8}
.site-watch{border-left:3px solid #94a3b8;padding-left:14px;margin:18px 0}
""" + "".join(f".kind-{k}{{border-left-color:{c}}}.badge.kind-{k}{{background:{c}}}" for k, c in KIND_COLOURS.items())

#: the policy a browser enforces on the report itself: nothing loads, nothing runs, styles inline
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


@dataclass
class ReportSummary:
    """What the top of the report says: the period, the store, counts by spider and kind (from
    SQL), the failing watches and the open health conditions."""

    since: str
    until: str
    store: str
    counts: Mapping[tuple[str, str], int]
    failing_total: int = 0
    failing: Sequence[FailingWatch] = ()
    conditions: Sequence[OpenCondition] = ()
    filters: Sequence[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (_, kind), n in self.counts.items():
            out[kind] = out.get(kind, 0) + n
        return out


def _when(moment: str) -> str:
    """``2026-11-30T12:00:00Z`` as people read it: ``2026-11-30 12:00 UTC``."""
    if len(moment) == 20 and moment[10] == "T" and moment.endswith("Z"):
        return f"{moment[:10]} {moment[11:16]} UTC"
    return moment


def opening(summary: ReportSummary) -> str:
    title = f"changewatch report: {_when(summary.since)} to {_when(summary.until)}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
            f"<h1>Changes from {escape(_when(summary.since))} to {escape(_when(summary.until))}</h1>"
            f'<p class="sub">store {escape(summary.store)}'
            + (f" · {escape(', '.join(summary.filters))}" if summary.filters else "") + "</p>")


def summary_html(summary: ReportSummary, kinds: Iterable[str]) -> str:
    by_kind = summary.by_kind()
    cards = [f'<div class="card"><b>{summary.total:,}</b><span>changes</span></div>']
    cards += [f'<div class="card kind-{k}" style="border-left:4px solid {KIND_COLOURS.get(k, "#64748b")}">'
              f"<b>{by_kind.get(k, 0):,}</b><span>{escape(k)}</span></div>" for k in kinds]
    cards.append(f'<div class="card"><b class="{"warn" if summary.failing_total else ""}">{summary.failing_total:,}'
                 "</b><span>failing watches</span></div>")
    cards.append(f'<div class="card"><b class="{"warn" if summary.conditions else ""}">{len(summary.conditions)}'
                 "</b><span>health warnings</span></div>")
    parts = ['<section id="summary"><h2>Summary</h2>', f'<div class="cards">{"".join(cards)}</div>']
    spiders = sorted({spider for spider, _ in summary.counts})
    if len(spiders) > 1:
        rows = "".join(f"<tr><th scope=\"row\">{text(s)}</th>" + "".join(
            f"<td>{summary.counts.get((s, k), 0)}</td>" for k in kinds) + "</tr>" for s in spiders)
        parts.append("<table class=\"by-spider\"><thead><tr><th>spider</th>" +
                     "".join(f"<th>{escape(k)}</th>" for k in kinds) + f"</tr></thead><tbody>{rows}</tbody></table>")
    parts.append(_health_list(summary.conditions))
    parts.append(_failing_list(summary))
    return "".join(parts) + "</section>"


def _health_list(conditions: Sequence[OpenCondition]) -> str:
    if not conditions:
        return '<h3>Health warnings</h3><p class="meta">none open: the watcher sees its sites as it should</p>'
    rows = "".join(f"<tr><td>{text(c.site)}</td><td><code>{text(c.condition)}</code></td><td>{text(c.since)}</td>"
                   f'<td class="warn">{text(c.error)}</td></tr>' for c in conditions)
    return ("<h3>Health warnings</h3><table class=\"health\"><thead><tr><th>site</th><th>condition</th>"
            f"<th>since</th><th>warning</th></tr></thead><tbody>{rows}</tbody></table>")


def _failing_list(summary: ReportSummary) -> str:
    if not summary.failing_total:
        return '<h3>Failing watches</h3><p class="meta">none</p>'
    rows = "".join(f"<tr><td>{text(w.key)}</td><td>{link(w.url)}</td><td>{w.error_streak}</td>"
                   f'<td class="error">{text(w.last_error or "")}</td><td>{text(w.last_good or "never")}</td></tr>'
                   for w in summary.failing)
    more = summary.failing_total - len(summary.failing)
    return ("<h3>Failing watches</h3><table class=\"failing\"><thead><tr><th>key</th><th>page</th><th>runs</th>"
            f"<th>last error</th><th>last good</th></tr></thead><tbody>{rows}</tbody></table>"
            + (f'<p class="more">{more} more not shown</p>' if more > 0 else ""))


def _site(site: SiteHistory, days: Sequence[str], warnings: Sequence[OpenCondition]) -> str:
    warned = "".join(f'<p class="warn">{text(c.error)}</p>' for c in warnings)
    return (f'<div class="site{" warned" if warnings else ""}"><h3>{text(site.site)} <span class="meta">'
            f"{site.observations:,} observations</span></h3>{warned}<h4>observations per day, by kind</h4>"
            f"{kinds_chart(site, days)}<h4>noise distance per day: mean (bar) and largest (line)</h4>"
            f"{noise_chart(site, days)}</div>")


def sites_html(sites: Sequence[SiteHistory], days: Sequence[str], more: int,
               conditions: Sequence[OpenCondition] = ()) -> str:
    if not sites:
        return ('<section id="sites"><h2>Sites</h2><p class="empty">No health history in this period: nothing was '
                "observed, or the store is of a changewatch that kept none.</p></section>")
    blocks = "".join(_site(s, days, [c for c in conditions if c.site == s.site]) for s in sites)
    return (f'<section id="sites"><h2>Sites</h2>{legend()}<div class="sites">{blocks}</div>'
            + (f'<p class="more">{more} more sites not shown</p>' if more else "") + "</section>")


def changes_header(total: int, shown: int) -> str:
    if total == 0:
        return ('<section id="changes"><h2>Changes</h2><p class="empty">No changes in this period. (Nothing changed, '
                "or nothing was crawled: the sites and the health warnings above say which.)</p>")
    note = f"the newest {shown:,} of {total:,}, newest first" if shown < total else f"{total:,}, newest first"
    return f'<section id="changes"><h2>Changes <span class="meta">({note})</span></h2>'


def site_watch_opening(changes: SiteChanges) -> str:
    """The start of a site watch's changes (its pages' gathered under it): what the shown ones say
    of the site. Closed by ``</section>``."""
    return (f'<section class="site-watch" id="site-watch-{escape(changes.site_watch, quote=True)}">'
            f"<h3>{text(changes.line())}</h3>")


def closing(total: int, shown: int) -> str:
    more = f'<p class="more" id="more">{total - shown:,} more not shown (narrow --since, --kind or --spider, or ' \
           f"raise --limit)</p>" if total > shown else ""
    return f"{more}</section></main></body></html>\n"
