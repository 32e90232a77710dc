"""
A loop-closure constraint with Baraff's method
==============================================

A chain of rigid bodies (6×6 mass blocks) joined by ball joints (3-row equality constraints)
is a tree: :class:`graphsolve.ConstraintSystem` makes those joints *primary* and factors
Baraff's matrix ``H`` once without fill. A joint from the last body back to the first closes
a loop; it becomes *auxiliary* and is coupled through a small dense matrix (Baraff 1996, §8).
"""

import matplotlib.pyplot as plt
import numpy as np

import graphsolve as gs

n = 8
rng = np.random.default_rng(0)
system = gs.ConstraintSystem([np.diag([1.0, 1.0, 1.0, 0.1, 0.1, 0.1])] * n)


def ball_joint(i, j):
    """Three rows: the velocity of a point shared by bodies ``i`` and ``j`` agrees."""
    Ji = np.hstack([np.eye(3), rng.standard_normal((3, 3))])
    Jj = np.hstack([-np.eye(3), rng.standard_normal((3, 3))])
    return system.add_constraint((i, j), [Ji, Jj], np.zeros(3))


chain = [ball_joint(i, i + 1) for i in range(n - 1)]
loop = ball_joint(n - 1, 0)                       # closes the loop
gravity = [np.array([0.0, 0.0, -9.81, 0.0, 0.0, 0.0])] * n
res = system.solve(gravity)
print("primary:", res.primary)
print("auxiliary:", res.auxiliary)
print("equality residual:", res.residuals["equality"])

# %%
# The multiplier (constraint force) of every joint, the loop closure last.
fig, ax = plt.subplots(figsize=(7, 3.5))
norms = [np.linalg.norm(res.multipliers[k]) for k in chain + [loop]]
ax.bar(range(n), norms, color=["C0"] * (n - 1) + ["C3"])
ax.set_xlabel("constraint (the last one closes the loop)")
ax.set_ylabel("|λ|")
fig.tight_layout()
plt.show()
