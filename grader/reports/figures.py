"""The report's figures: matplotlib (no display), each returned as a PNG embedded in an <img> tag."""
import base64
import io
from datetime import datetime

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FULL, PARTIAL, ZERO = "#2e7d32", "#f9a825", "#c62828"


def _img(fig, alt: str) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img class="figure" alt="{alt}" src="data:image/png;base64,{data}">'


def score_histogram(totals: list, max_score: float) -> str:
    fig, ax = plt.subplots(figsize=(6, 2.8))
    bins = min(20, max(5, int(max_score) + 1))
    ax.hist(totals, bins=bins, range=(0, max(max_score, 1)), color="#1565c0", edgecolor="white")
    ax.set_xlabel(f"score (out of {max_score:g})")
    ax.set_ylabel("students")
    ax.set_title("Score distribution")
    return _img(fig, "score distribution")


def exercise_bars(stats: list) -> str:
    labels = [s.exercise.label for s in stats]
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(stats) + 1.2))
    y = range(len(stats))
    full = [s.full for s in stats]
    partial = [s.partial for s in stats]
    zero = [s.zero for s in stats]
    ax.barh(y, full, color=FULL, label="full points")
    ax.barh(y, partial, left=full, color=PARTIAL, label="partial")
    ax.barh(y, zero, left=[f + p for f, p in zip(full, partial)], color=ZERO, label="zero")
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    ax.set_xlabel("students")
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("Per exercise")
    return _img(fig, "full, partial and zero scores per exercise")


def handins_over_time(times: list, due: datetime | None) -> str:
    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.hist(times, bins=min(48, max(5, len(times))), color="#6a1b9a", edgecolor="white")
    if due is not None:
        ax.axvline(due, color=ZERO, linestyle="--", label="due")
        ax.legend(fontsize="small")
    ax.set_ylabel("hand-ins")
    ax.set_title("Hand-ins over time (UTC)")
    fig.autofmt_xdate()
    return _img(fig, "hand-ins over time")


def first_and_best(pairs: list, max_score: float) -> str:
    """pairs: [(first score, best score)]."""
    fig, ax = plt.subplots(figsize=(3.6, 3.4))
    ax.scatter([p[0] for p in pairs], [p[1] for p in pairs], alpha=0.6, color="#00838f")
    ax.plot([0, max_score], [0, max_score], color="grey", linewidth=0.8)
    ax.set_xlabel("first attempt")
    ax.set_ylabel("best attempt")
    ax.set_title("First and best score")
    return _img(fig, "first and best score per student")
