"""
Benchmark one case against CHOLMOD
==================================

The timing discipline of :mod:`comparisons.runner` (warm-up excluded, best of several
repeats) applied by hand to one matrix: refactor + solve of a 6×6-block random tree with
graphsolve and with CHOLMOD (scikit-sparse, when installed). ``python -m comparisons run``
does this for whole suites, with interleaved rounds and pinned BLAS threads.
"""

import matplotlib.pyplot as plt
import numpy as np

import graphsolve as gs
from comparisons.runner import time_call

A = gs.random_block_matrix(gs.generators.random_tree(1000, seed=0), kind="spd", seed=0)
S = A.to_scipy().tocsc()
b = np.ones(A.shape[0])

F = gs.factorize(A)


def graphsolve_step():
    F.refactor(A)
    return F.solve(b)


times = {"graphsolve": time_call(graphsolve_step, repeats=20)}

try:
    from sksparse.cholmod import analyze as cholmod_analyze
except ImportError:  # the bench extra is not installed
    cholmod_analyze = None

if cholmod_analyze is not None:
    C = cholmod_analyze(S)
    C.cholesky_inplace(S)

    def cholmod_step():
        C.cholesky_inplace(S)
        return C(b)

    times["CHOLMOD"] = time_call(cholmod_step, repeats=20)

for name, t in times.items():
    print(f"{name:10s} best {t.best * 1e3:.3f} ms, median {t.median * 1e3:.3f} ms")

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.bar(list(times), [t.best * 1e3 for t in times.values()])
ax.set_ylabel("refactor + solve [ms], best of 20")
ax.set_title("random tree, 1000 nodes, 6×6 blocks")
fig.tight_layout()
plt.show()
