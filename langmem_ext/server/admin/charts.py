"""Bar charts as inline SVG, drawn on the server (no chart library, no script)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def bar_chart(
    bars: Sequence[tuple[str, float]],
    *,
    title: str,
    width: int = 560,
    height: int = 180,
    label_every: int = 1,
) -> str:
    """An accessible SVG bar chart (``role="img"``, a ``<title>``, a value per bar).

    Args:
        bars: ``(label, value)`` pairs, left to right.
        title: What the chart shows (its accessible name).
        width: Width in px.
        height: Height in px (labels below take 30 more).
        label_every: Write every n-th label on the axis (all values stay in the titles).

    Returns:
        The ``<svg>`` element.

    Example:
        >>> "<rect" in bar_chart([("a", 1), ("b", 3)], title="t")
        True
    """
    top = max((v for _, v in bars), default=0) or 1
    n = max(len(bars), 1)
    pad = 20.0  # room for the first and last labels
    step = (width - 2 * pad) / n
    bar_w = max(step * 0.7, 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'width="{width}" height="{height + 30}" viewBox="0 0 {width} {height + 30}">',
        f"<title>{escape(title)}</title>",
        f'<line x1="0" y1="{height}" x2="{width}" y2="{height}" class="axis"/>',
    ]
    for i, (label, value) in enumerate(bars):
        h = (value / top) * (height - 16)
        x = pad + i * step + (step - bar_w) / 2
        y = height - h
        text = f"{escape(label)}: {value:g}"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" class="bar">'
            f"<title>{text}</title></rect>"
        )
        if value:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" class="val">{value:g}</text>'
            )
        if i % max(label_every, 1) == 0:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{height + 16}" class="lbl">{escape(label)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def histogram_bars(
    counts: Sequence[int], *, low: float = 0.0, high: float = 1.0
) -> list[tuple[str, float]]:
    """The bars of a histogram of equal bins from ``low`` to ``high``, each labelled
    with the two edges of its bin (``0.9–1.0``), not one number a reader takes for
    the bin's value.

    Args:
        counts: How many values fell in each bin, lowest bin first.
        low: The lower edge of the first bin.
        high: The upper edge of the last bin.

    Returns:
        ``(label, count)`` pairs for :func:`bar_chart`.

    Example:
        >>> histogram_bars([2, 0, 5])
        [('0.0–0.3', 2.0), ('0.3–0.7', 0.0), ('0.7–1.0', 5.0)]
    """
    width = (high - low) / max(len(counts), 1)
    return [
        (f"{low + i * width:.1f}–{low + (i + 1) * width:.1f}", float(n))
        for i, n in enumerate(counts)
    ]


__all__ = ["bar_chart", "histogram_bars"]
