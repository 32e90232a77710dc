"""paper_figures: one command regenerates the comparison figures as PNG + CSV.

``python -m paper_figures [--quick] [--only NAME] [--out DIR]``. Each figure is one module with
``NAME``, ``TITLE``, ``SOLVERS`` (the method ids in its rows' ``solver`` column),
``COMPARATORS`` (``{solver id: "paper's own" | "substitute: why" | "addition: why"}`` for the
methods it compares against, see :mod:`paper_figures._report`), ``TINY`` (the
keyword arguments of a seconds-long configuration for the test suite), ``compute(quick, **TINY)
-> list[dict]`` (rows of the CSV), ``plot(rows, png_path)``, ``summarize(rows) -> list[str]``
(the numbers printed after the run) and optionally ``check(rows)``, which asserts what the
figure must show (constraint violation, energy error, ...); without it the test requires a
small ``residual`` on every successful row, as for the linear-solver figures. Figures use only
the public APIs of ``graphsolve``, ``dynamics`` and ``comparisons`` and the timing discipline
of ``comparisons.runner``; they hold no library code.
"""

from . import (
    fig07abc_accuracy,
    fig07d_box_drop,
    fig08a_pendulum_timing,
    fig08b_sphere_chain,
    fig09a_segment_chain,
    fig09b_ladder,
    fig09bcd_graphs,
    fig10_tolerances,
    fig11_scaled_pendulum,
    fig12_double_fourbar,
    fig13_quadruped_learning,
    fig14_exoskeleton,
    fig2020_fig4,
    fig2020_fig5,
    fig2020_fig6,
    fig2020_fig7_minitaur,
    fig2020_fig8,
    fig_baraff_speedup,
    fig_lee2016_fig2to4,
    fig_si_guenter_table1,
)

FIGURES = {m.NAME: m for m in (fig07abc_accuracy, fig07d_box_drop, fig08a_pendulum_timing,
                                fig08b_sphere_chain, fig09a_segment_chain,
                                fig09b_ladder, fig09bcd_graphs, fig11_scaled_pendulum,
                                fig10_tolerances, fig12_double_fourbar,
                                fig13_quadruped_learning, fig14_exoskeleton,
                                fig_baraff_speedup,
                                fig_lee2016_fig2to4, fig2020_fig4, fig2020_fig5,
                                fig2020_fig6, fig2020_fig7_minitaur, fig2020_fig8,
                                fig_si_guenter_table1)}

__all__ = ["FIGURES"]
