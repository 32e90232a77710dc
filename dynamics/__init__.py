"""dynamics: mechanisms described without coordinates (``spec``, ``models``, ``urdf``),
simulated in maximal coordinates with graphsolve (``maximal``: variational integrator, joints,
ground contacts with friction) and in minimal coordinates (``minimal``: spatial algebra, RNEA,
ABA, CRBA on kinematic trees)."""
