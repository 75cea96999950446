"""Small inline-SVG charts of a site's health history: observations per day stacked by kind, and
the noise distance per day (mean bar, largest as a tick). Plain strings; every label escaped."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

__all__ = ["KIND_COLOURS", "SiteHistory", "kinds_chart", "noise_chart"]

#: each kind's colour, in the order the bars stack (bottom first)
KIND_COLOURS = {
    "none": "#cbd5e1", "baseline": "#94a3b8", "noise": "#f59e0b", "field": "#2563eb", "entities": "#7c3aed",
    "content": "#059669", "moved": "#0891b2", "recovered": "#16a34a", "blocked": "#9f1239", "error": "#dc2626",
}
_W, _H, _PAD = 560, 110, 22


@dataclass
class SiteHistory:
    """One site's history as the charts read it: per day, observations by kind and the noise
    distances (how many, their sum, the largest)."""

    site: str
    kinds: dict[str, Counter[str]] = field(default_factory=dict)
    noise: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @property
    def observations(self) -> int:
        return sum(sum(c.values()) for c in self.kinds.values())

    def add(self, day: str, kind: str, count: int, distances: int, distance_sum: int, distance_max: int) -> None:
        self.kinds.setdefault(day, Counter())[kind] += count
        if kind == "noise" and distances:
            n, total, top = self.noise.get(day, (0, 0, 0))
            self.noise[day] = (n + distances, total + distance_sum, max(top, distance_max))


def _frame(kind: str, label: str, body: list[str], days: Sequence[str], top: str) -> str:
    first, last = escape(days[0]), escape(days[-1])
    return (f'<svg class="chart {kind}" role="img" aria-label="{escape(label)}" viewBox="0 0 {_W} {_H + _PAD}" '
            f'width="{_W}" height="{_H + _PAD}" xmlns="http://www.w3.org/2000/svg">'
            f'<title>{escape(label)}</title>'
            f'<line x1="0" y1="{_H}" x2="{_W}" y2="{_H}" stroke="#94a3b8" stroke-width="1"/>'
            + "".join(body) +
            f'<text x="0" y="{_H + 15}" font-size="11" fill="#475569">{first}</text>'
            f'<text x="{_W}" y="{_H + 15}" font-size="11" fill="#475569" text-anchor="end">{last}</text>'
            f'<text x="2" y="11" font-size="11" fill="#475569">{escape(top)}</text></svg>')


def kinds_chart(history: SiteHistory, days: Sequence[str]) -> str:
    """Observations of *history* on each of *days*, stacked by kind."""
    highest = max((sum(history.kinds.get(d, Counter()).values()) for d in days), default=0) or 1
    step = _W / max(len(days), 1)
    body: list[str] = []
    for i, day in enumerate(days):
        counts = history.kinds.get(day, Counter())
        y = float(_H)
        for kind, colour in KIND_COLOURS.items():
            if not counts.get(kind):
                continue
            height = counts[kind] / highest * (_H - 14)
            y -= height
            body.append(f'<rect class="bar kind-{kind}" x="{i * step + 1:.1f}" y="{y:.1f}" '
                        f'width="{max(step - 2, 1):.1f}" height="{height:.1f}" fill="{colour}">'
                        f"<title>{escape(day)}: {counts[kind]} {kind}</title></rect>")
    return _frame("kinds", f"{history.site}: observations per day by kind", body, days, f"{highest} a day")


def noise_chart(history: SiteHistory, days: Sequence[str]) -> str:
    """The noise distance of *history* on each of *days*: the mean as a bar, the largest as a tick."""
    highest = max((top for _, _, top in history.noise.values()), default=0) or 1
    step = _W / max(len(days), 1)
    body: list[str] = []
    for i, day in enumerate(days):
        if day not in history.noise:
            continue
        n, total, top = history.noise[day]
        mean = total / n
        height, tick = mean / highest * (_H - 14), _H - top / highest * (_H - 14)
        x, width = i * step + 1, max(step - 2, 1)
        body.append(f'<rect class="bar noise" x="{x:.1f}" y="{_H - height:.1f}" width="{width:.1f}" '
                    f'height="{height:.1f}" fill="#f59e0b"><title>{escape(day)}: {n} noisy, mean {mean:.1f} bits, '
                    f"largest {top}</title></rect>"
                    f'<line x1="{x:.1f}" y1="{tick:.1f}" x2="{x + width:.1f}" y2="{tick:.1f}" stroke="#b45309" '
                    'stroke-width="2"/>')
    return _frame("noise", f"{history.site}: noise distance per day (bits)", body, days, f"{highest} bits")


def legend(kinds: Mapping[str, str] = KIND_COLOURS) -> str:
    return '<p class="legend">' + "".join(
        f'<span><i style="background:{colour}"></i>{escape(kind)}</span>' for kind, colour in kinds.items()) + "</p>"
