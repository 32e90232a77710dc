"""What the figure modules' ``plot`` functions share: selecting the successful rows of a method,
ticks at the measured sizes, the common finish of every panel (grid, legend, x label) and of the
figure (title, PNG, closed). Matplotlib is imported by the callers' ``plot`` (the ``plot``
extra); nothing here imports it at module level."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def ok_rows(rows: Iterable[dict], order_by: str, **match: Any) -> list[dict]:
    """The rows with ``status == "ok"`` whose columns equal ``match``, sorted by column
    ``order_by`` (e.g. ``ok_rows(rows, "n", solver="maximal")``)."""
    return sorted((r for r in rows if r["status"] == "ok"
                   and all(r[k] == v for k, v in match.items())), key=lambda r: r[order_by])


def size_ticks(ax: Any, sizes: Sequence[float]) -> None:
    """x ticks at the measured ``sizes``, written as plain numbers (also on a log axis)."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.set_xticks(list(sizes))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())


def finish_axes(axes: Any, *, xlabel: str | None = None, xticks: Sequence[float] | None = None,
                legend: bool = True, legend_size: float = 7, **legend_kw: Any) -> None:
    """Every panel of ``axes`` (one Axes or an array of them): grid on major and minor ticks,
    the legend (``legend_size`` points, ``legend_kw`` passed on), and where given the x label
    and :func:`size_ticks`."""
    for ax in np.ravel(axes):
        if xlabel is not None:
            ax.set_xlabel(xlabel)
        if xticks is not None:
            size_ticks(ax, xticks)
        ax.grid(True, which="both", alpha=0.3)
        if legend:
            ax.legend(fontsize=legend_size, **legend_kw)


def save_figure(fig: Any, path: str | Path, title: str | None, *,
                title_size: float | None = 11, dpi: int = 120) -> None:
    """Title the figure (``title_size`` points; None: Matplotlib's figure-title size), write
    it to ``path`` and close it."""
    import matplotlib.pyplot as plt

    if title is not None:
        fig.suptitle(title, **({} if title_size is None else {"fontsize": title_size}))
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
