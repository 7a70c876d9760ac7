"""Why: the learning curve as a picture with no plotting library: a small hand-written SVG of the
mean reward per training step (and the policy's own solve probability), readable in a browser or
on GitHub."""

from __future__ import annotations

from typing import Sequence
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 20, 36, 48


def _x(i: int, n: int) -> float:
    return LEFT + (WIDTH - LEFT - RIGHT) * (i / max(1, n - 1))


def _y(v: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1 - v)


def _line(values: Sequence[float], colour: str, dashed: bool) -> str:
    points = " ".join(f"{_x(i, len(values)):.1f},{_y(v):.1f}" for i, v in enumerate(values))
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    dots = "".join(f'<circle cx="{_x(i, len(values)):.1f}" cy="{_y(v):.1f}" r="3" fill="{colour}"/>' for i, v in enumerate(values)) if not dashed else ""
    return f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{points}"/>{dots}'


def reward_curve_svg(steps: Sequence[int], mean_reward: Sequence[float], solve_probability: Sequence[float], title: str) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">']
    parts.append(f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>')
    parts.append(f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>')
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    for i, step in enumerate(steps):
        x = _x(i, len(steps))
        parts.append(f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{step}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 10}" text-anchor="middle">training step</text>')
    parts.append(_line(solve_probability, "#999", dashed=True))
    parts.append(_line(mean_reward, "#1f6feb", dashed=False))
    # Bottom right: a rising curve leaves it empty.
    legend_x, legend_y = WIDTH - RIGHT - 330, _y(0.16)
    parts.append(f'<line x1="{legend_x}" y1="{legend_y:.1f}" x2="{legend_x + 24}" y2="{legend_y:.1f}" stroke="#1f6feb" stroke-width="2"/><text x="{legend_x + 30}" y="{legend_y + 4:.1f}">mean reward of the step\'s groups</text>')
    parts.append(f'<line x1="{legend_x}" y1="{legend_y + 18:.1f}" x2="{legend_x + 24}" y2="{legend_y + 18:.1f}" stroke="#999" stroke-width="2" stroke-dasharray="6 4"/><text x="{legend_x + 30}" y="{legend_y + 22:.1f}">mean π(solve) over the tasks before the step\'s update</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
