"""dynamics: mechanisms (spec, models, URDF) simulated in maximal coordinates (``maximal``)
with graphsolve, and a minimal-coordinate baseline (``minimal``)."""
