"""dynamics: mechanisms described without coordinates (``spec``, ``models``, ``urdf``),
simulated in maximal coordinates with graphsolve (``maximal``: variational integrator, joints,
ground contacts with friction), in minimal coordinates (``minimal``: spatial algebra, RNEA,
ABA, CRBA on kinematic trees) and in redundant director coordinates (``redundant``, with the
GGL variational integrator of Kinon, Betsch & Schneider 2023 in ``ggl``)."""
