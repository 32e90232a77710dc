"""asv regression benchmarks of graphsolve and dynamics (``make bench``; configuration in
``asv.conf.json`` at the repository root).

These track graphsolve's own timings commit by commit; the peer ratios (CHOLMOD, QDLDL, SuperLU,
Pinocchio, MuJoCo) stay in ``comparisons``.
"""
