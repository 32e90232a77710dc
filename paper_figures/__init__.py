"""paper_figures: one command regenerates the comparison figures as PNG + CSV.

``python -m paper_figures [--quick] [--only NAME] [--out DIR]``. Each figure is one module with
``NAME``, ``TITLE``, ``compute(quick) -> list[dict]`` (rows of the CSV) and
``plot(rows, png_path)``. Figures use only the public APIs of ``graphsolve`` and the timing
discipline of ``comparisons.runner``; they hold no library code.
"""

from . import fig09b_ladder, fig09bcd_graphs

FIGURES = {m.NAME: m for m in (fig09b_ladder, fig09bcd_graphs)}

__all__ = ["FIGURES"]
