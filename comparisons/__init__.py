"""comparisons: graphsolve against CHOLMOD, SuperLU and dense LAPACK (issue #3).

For now only the timing discipline (:mod:`comparisons.runner`) used by ``paper_figures``.
"""
