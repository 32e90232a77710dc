"""
Solve a ladder system
=====================

A ladder graph (two rails joined by rungs) carries one dense 6×6 block per node and one
off-diagonal block per edge. :func:`graphsolve.analyze` orders the nodes and predicts the fill,
:func:`graphsolve.factorize` computes the block LDLᵀ factor (the matrix is symmetric positive
definite), and :meth:`~graphsolve.Factorization.refactor` reuses everything symbolic for a
matrix with new values on the same pattern.
"""

import matplotlib.pyplot as plt
import numpy as np

import graphsolve as gs

G = gs.generators.ladder(40)                      # 40 nodes, 20 rungs
A = gs.random_block_matrix(G, kind="spd", block_size=6, seed=0)
b = np.ones(A.shape[0])

an = gs.analyze(A)
F = gs.factorize(A, analysis=an)
x = F.solve(b)
print("ordering:", an.ordering, "| fill blocks:", an.n_fill, "| method:", F.stats["method"])
print("residual:", np.abs(A.to_scipy() @ x - b).max())

# %%
# New values on the same pattern: refactor without a new analysis.
A2 = gs.BlockMatrix.from_scipy(1.5 * A.to_scipy(), A.block_sizes)
F.refactor(A2)
x2 = F.solve(b)
print("x2 == x / 1.5:", np.allclose(x2, x / 1.5))

# %%
# The permuted matrix and its factor ``P A Pᵀ = L D Lᵀ``: a ladder's Brüdigam order eliminates
# the nodes leaves to root and fills one block per loop.
p = F.perm
fig, axes = plt.subplots(1, 2, figsize=(8, 4))
axes[0].spy(A.to_scipy()[p][:, p], markersize=0.5)
axes[0].set_title("A[p][:, p]")
axes[1].spy(F.L, markersize=0.5)
axes[1].set_title(f"L ({an.n_fill} fill blocks)")
fig.tight_layout()
plt.show()
