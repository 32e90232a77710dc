"""Ready-made mechanisms of the seed papers as coordinate-free specs.

Links are rods along their body z axis with the centre of mass in the middle; at zero joint
angles a pendulum hangs straight down (-z). Revolute joints turn about the world x axis, so
planar mechanisms move in the y-z plane. Loops are closed with a ``"cylindrical_free"`` joint
(two constraints: the closing point stays on the x-parallel line through its partner), which
removes exactly the in-plane freedoms; a revolute closure would add three redundant constraints
and make the Newton matrix singular.

References
----------
J. Brüdigam, S. Sosnowski, Z. Manchester, S. Hirche (2023), §5.1-5.3 (Fig. 7, 8, 9a, 11, 12).
J. Brüdigam, Z. Manchester (2020), §5 (n-link pendulum, four-bar chains).
"""
from __future__ import annotations

import numpy as np

from . import quaternion as quat
from .spec import WORLD, Body, BodyContact, Contact, Joint, MechanismSpec, Shape

__all__ = ["rod", "pendulum", "double_pendulum", "fourbar", "segment_chain", "double_fourbar",
           "scaled_pendulum", "box_drop", "sphere_chain", "box_on_slope", "quadruped",
           "sphere_stack", "sphere_collision", "arm_exoskeleton", "PATIENTS", "five_bar_pose",
           "five_bar_leg", "minitaur", "MINITAUR_HIPS", "a1_quadruped", "A1_LEGS",
           "a1_foot_positions"]

_X = np.array([1.0, 0.0, 0.0])
_Y = np.array([0.0, 1.0, 0.0])
_Z = np.array([0.0, 0.0, 1.0])


def rod(name: str, length: float = 1.0, mass: float = 1.0, radius: float = 0.05) -> Body:
    """A solid cylinder of ``length`` along its body z axis (inertia about its centre)."""
    shape = Shape("cylinder", (radius, length))
    return Body(name, mass, shape.inertia(mass), shape)


def _top(length: float) -> np.ndarray:
    return np.array([0.0, 0.0, 0.5 * length])


def pendulum(n: int = 1, joint: str = "revolute", *, length: float = 1.0, mass: float = 1.0,
             initial_angle: float = np.pi / 4, damper: float = 0.0,
             actuated: bool = False) -> MechanismSpec:
    """``n`` rods of ``length`` (m) and ``mass`` (kg) hanging from the world in a chain.

    ``joint`` is ``"revolute"`` (about x) or ``"spherical"``. The first joint starts rotated by
    ``initial_angle`` about x (the others at zero), at rest. This is the n-link pendulum of
    Brüdigam et al. (2023) Fig. 8a / 10 (l = 1 m, m = 1 kg).

    >>> spec = pendulum(3)
    >>> len(spec.bodies), [j.type for j in spec.joints]
    (3, ['revolute', 'revolute', 'revolute'])
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if joint not in ("revolute", "spherical"):
        raise ValueError(f"joint must be 'revolute' or 'spherical', got {joint!r}")
    bodies = [rod(f"link{i + 1}", length, mass) for i in range(n)]
    joints = []
    for i in range(n):
        parent = WORLD if i == 0 else f"link{i}"
        ppoint = np.zeros(3) if i == 0 else -_top(length)
        joints.append(Joint(f"joint{i + 1}", joint, parent, f"link{i + 1}", ppoint,
                            _top(length), _X, damper=damper, actuated=actuated))
    q0 = [initial_angle] if joint == "revolute" else [initial_angle, 0.0, 0.0]
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions={"joint1": q0},
                         name=f"pendulum{n}_{joint}")


def double_pendulum(*, length: float = 1.0, mass: float = 1.0) -> MechanismSpec:
    """Double pendulum released from rest with both links horizontal (2023 Fig. 7b)."""
    return pendulum(2, length=length, mass=mass, initial_angle=np.pi / 2)


def _parallelogram(prefix: str, parent: str, left_point, right_point, offset, side: float,
                   bar: float, side_mass: float, bar_mass: float, angle: float):
    """Two side links hanging from ``parent`` and a bar joining their lower ends (closed)."""
    left, right, b = f"{prefix}left", f"{prefix}right", f"{prefix}bar"
    bodies = [rod(left, side, side_mass), rod(b, bar, bar_mass), rod(right, side, side_mass)]
    down = quat.from_axis_angle(_X, np.pi / 2)        # bar frame: body z along -y
    joints = [
        Joint(f"{prefix}joint_left", "revolute", parent, left, left_point, _top(side), _X,
              orientation_offset=offset),
        Joint(f"{prefix}joint_bar", "revolute", left, b, -_top(side), _top(bar), _X,
              orientation_offset=down),
        Joint(f"{prefix}joint_right", "revolute", parent, right, right_point, _top(side), _X,
              orientation_offset=offset),
        Joint(f"{prefix}closure", "cylindrical_free", b, right, -_top(bar), -_top(side), _X),
    ]
    init = {f"{prefix}joint_left": [angle], f"{prefix}joint_bar": [-angle],
            f"{prefix}joint_right": [angle]}
    return bodies, joints, init


def fourbar(*, initial_angle: float = np.pi / 4) -> MechanismSpec:
    """Parallelogram four-bar of Brüdigam et al. (2023) Fig. 7a.

    Links l1 = 1 m, l2 = √2/2 m, l3 = 1 m with masses 1, √2/2, 1 kg; the ground pivots are
    √2/2 m apart (the fixed fourth link). Released from rest with the side links at
    ``initial_angle`` from the vertical.
    """
    w = np.sqrt(2.0) / 2.0
    bodies, joints, init = _parallelogram("", WORLD, np.zeros(3), np.array([0.0, w, 0.0]),
                                          quat.IDENTITY, 1.0, w, 1.0, w, initial_angle)
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init, name="fourbar")


def segment_chain(m: int, *, initial_angle: float = np.pi / 6) -> MechanismSpec:
    """Chain of ``m`` stacked parallelogram four-link loops (2023 Fig. 9a; 1 m, 1 kg links).

    Segment 0 hangs from two world pivots 1 m apart; segment s > 0 hangs from the ends of the
    bar of segment s - 1, which is its fourth link. Each segment adds one loop, so the
    mechanism graph has cycle rank ``m``.
    """
    if not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    bodies, joints, init = [], [], {}
    up = quat.from_axis_angle(_X, -np.pi / 2)     # undo the bar's frame: hang straight down
    for s in range(m):
        if s == 0:
            args = (WORLD, np.zeros(3), np.array([0.0, 1.0, 0.0]), quat.IDENTITY)
        else:
            args = (f"s{s - 1}_bar", _top(1.0), -_top(1.0), up)
        b, j, i = _parallelogram(f"s{s}_", *args, 1.0, 1.0, 1.0, 1.0, initial_angle)
        bodies += b
        joints += j
        init.update(i)
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init,
                         name=f"segment_chain{m}")


def double_fourbar(*, initial_velocity: float = 1.0, thin_bars: bool = False) -> MechanismSpec:
    """Double four-bar linkage (IFToMM multibody benchmark; 2023 §5.3, Fig. 12).

    Three cranks of 1 m and 1 kg pivot at y = 0, 1, 2 m on the ground; two couplers of 1 m and
    1 kg join their tips. The cranks start vertical (pointing up) and the couplers move
    horizontally: the initial crank rate is ``initial_velocity`` (rad/s, tip speed in m/s for
    1 m cranks). Gravity -9.81 m/s² along z. The linkage passes singular configurations when
    all bars are parallel.

    The bars are solid cylinders of radius 5 cm (:func:`rod`; moment of inertia
    ``m (3 r² + l²)/12`` about the transverse axes), or with ``thin_bars=True`` slender bars of
    ``J = m l²/12``, the bars of Kinon, Betsch & Schneider (2023) that the 2023 paper says it
    uses; their axial inertia, which no joint excites (all turn about x), is set to ``J/100``
    so every body stays regular for ``dynamics.maximal``.
    """
    if thin_bars:
        j = 1.0 / 12.0

        def bar(name):
            return Body(name, 1.0, np.diag([j, j, 1e-2 * j]), Shape("cylinder", (0.01, 1.0)))
    else:
        bar = rod
    crank = [bar(f"crank{i + 1}") for i in range(3)]
    coupler = [bar(f"coupler{i + 1}") for i in range(2)]
    side = quat.from_axis_angle(_X, np.pi / 2)
    joints = [Joint("pivot1", "revolute", WORLD, "crank1", np.zeros(3), _top(1.0), _X),
              Joint("pin1", "revolute", "crank1", "coupler1", -_top(1.0), _top(1.0), _X,
                    orientation_offset=side),
              Joint("pivot2", "revolute", WORLD, "crank2", [0.0, 1.0, 0.0], _top(1.0), _X),
              Joint("pin2", "revolute", "crank2", "coupler2", -_top(1.0), _top(1.0), _X,
                    orientation_offset=side),
              Joint("pivot3", "revolute", WORLD, "crank3", [0.0, 2.0, 0.0], _top(1.0), _X),
              Joint("closure1", "cylindrical_free", "coupler1", "crank2", -_top(1.0),
                    -_top(1.0), _X),
              Joint("closure2", "cylindrical_free", "coupler2", "crank3", -_top(1.0),
                    -_top(1.0), _X)]
    # Crank "up" is an angle of π from hanging; the couplers stay horizontal: relative -π.
    init = {"pivot1": [np.pi], "pin1": [-np.pi], "pivot2": [np.pi], "pin2": [-np.pi],
            "pivot3": [np.pi]}
    w = initial_velocity
    vel = {"pivot1": [w], "pin1": [-w], "pivot2": [w], "pin2": [-w], "pivot3": [w]}
    return MechanismSpec(tuple(crank + coupler), tuple(joints), initial_positions=init,
                         initial_velocities=vel,
                         name="double_fourbar_thin" if thin_bars else "double_fourbar")


def scaled_pendulum(s: float, *, initial_angle: float = np.pi / 2) -> MechanismSpec:
    """Physically scaled pendulum of 2023 §5.3 (Fig. 11): m = s, l = s², J = m l²/3 at the pivot.

    A thin rod (transverse inertia m l²/12 about its centre) released from rest at
    ``initial_angle``; its period is ``2π sqrt(2 l / (3 g))`` for small swings.
    """
    if not s > 0:
        raise ValueError(f"scale s must be positive, got {s}")
    m, length = float(s), float(s) ** 2
    j = m * length**2 / 12.0
    body = Body("link1", m, np.diag([j, j, 1e-2 * j]), Shape("cylinder", (0.01 * length, length)))
    joint = Joint("joint1", "revolute", WORLD, "link1", np.zeros(3), _top(length), _X)
    return MechanismSpec((body,), (joint,), initial_positions={"joint1": [initial_angle]},
                         name=f"scaled_pendulum_{s:g}")


def box_drop(*, edge: float = 0.5, mass: float = 1.0, height: float = 0.4,
             friction: float = 0.2, n_friction: int = 4) -> MechanismSpec:
    """A free cube dropped onto the ground (2023 §5.1, Fig. 7d): 0.5 m, 1 kg, released at rest
    with its bottom ``height`` = 0.4 m above the ground; one point contact per corner."""
    shape = Shape("box", (edge, edge, edge))
    box = Body("box", mass, shape.inertia(mass), shape)
    h = 0.5 * edge
    corners = [np.array([sx, sy, sz]) * h for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    contacts = tuple(Contact(f"corner{i}", "box", c, friction=friction, n_friction=n_friction)
                     for i, c in enumerate(corners))
    joint = Joint("free", "floating", WORLD, "box")
    return MechanismSpec((box,), (joint,), initial_positions={"free": [0, 0, height + h, 0, 0, 0]},
                         name="box_drop", contacts=contacts)


def box_on_slope(angle: float, friction: float, *, edge: float = 0.5, mass: float = 1.0,
                 n_friction: int = 4) -> MechanismSpec:
    """A cube resting on a plane inclined by ``angle`` (rad): gravity is tilted instead of the
    ground, so the contacts stay on ``z = 0`` and the slope runs along x. The box sticks for
    ``friction > tan(angle)`` and otherwise slides with ``g (sin θ - μ cos θ)``."""
    spec = box_drop(edge=edge, mass=mass, height=0.0, friction=friction,
                    n_friction=n_friction)
    g = 9.81 * np.array([np.sin(angle), 0.0, -np.cos(angle)])
    return MechanismSpec(spec.bodies, spec.joints, g, spec.initial_positions, {},
                         f"box_on_slope_{angle:.3g}_{friction:g}", spec.contacts)


def sphere_chain(n: int, *, radius: float = 0.25, mass: float = 1.0, friction: float = 0.5,
                 velocity: float = 1.0, n_friction: int = 4) -> MechanismSpec:
    """``n`` spheres (0.25 m, 1 kg) joined by ball joints, lying on the ground along x
    (2023 §5.2, Fig. 8b); the chain starts sliding along x at ``velocity`` m/s."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    shape = Shape("sphere", (radius,))
    bodies = tuple(Body(f"sphere{i + 1}", mass, shape.inertia(mass), shape) for i in range(n))
    r = np.array([radius, 0.0, 0.0])
    joints = [Joint("free", "floating", WORLD, "sphere1")]
    joints += [Joint(f"ball{i + 1}", "spherical", f"sphere{i}", f"sphere{i + 1}", r, -r)
               for i in range(1, n)]
    contacts = tuple(Contact(f"ground{i + 1}", f"sphere{i + 1}", kind="sphere", radius=radius,
                             friction=friction, n_friction=n_friction) for i in range(n))
    return MechanismSpec(bodies, tuple(joints), initial_positions={"free": [0, 0, radius, 0, 0, 0]},
                         initial_velocities={"free": [velocity, 0, 0, 0, 0, 0]},
                         name=f"sphere_chain{n}", contacts=contacts)


def quadruped(*, hip_angle: float = 0.6, friction: float = 0.8, leg: float = 0.25,
              torso_mass: float = 3.0, thigh_mass: float = 1.0, shank_mass: float = 0.5,
              clearance: float = 0.001) -> MechanismSpec:
    """A small quadruped: a 0.6 × 0.3 × 0.1 m torso on a floating joint and four legs, each an
    actuated hip and knee (pitch, about y) with 0.25 m thigh and shank rods and a point contact
    with friction at the foot (the legged robot of 2023 §5.4 in miniature).

    It starts standing: hips at ``hip_angle``, knees at ``-2 hip_angle`` (feet under the hips),
    feet ``clearance`` above the ground. Drive it with :func:`dynamics.maximal.pd_controller`.
    """
    torso_shape = Shape("box", (0.6, 0.3, 0.1))
    bodies = [Body("torso", torso_mass, torso_shape.inertia(torso_mass), torso_shape)]
    joints = [Joint("free", "floating", WORLD, "torso")]
    contacts = []
    init = {}
    y_axis = np.array([0.0, 1.0, 0.0])
    for name, sx, sy in (("front_left", 1, 1), ("front_right", 1, -1), ("back_left", -1, 1),
                         ("back_right", -1, -1)):
        thigh, shank = f"{name}_thigh", f"{name}_shank"
        bodies += [rod(thigh, leg, thigh_mass, 0.03), rod(shank, leg, shank_mass, 0.02)]
        joints += [Joint(f"{name}_hip", "revolute", "torso", thigh,
                         [0.25 * sx, 0.15 * sy, -0.05], _top(leg), y_axis, actuated=True),
                   Joint(f"{name}_knee", "revolute", thigh, shank, -_top(leg), _top(leg),
                         y_axis, actuated=True)]
        contacts.append(Contact(f"{name}_foot", shank, -_top(leg), friction=friction))
        init[f"{name}_hip"] = [hip_angle]
        init[f"{name}_knee"] = [-2.0 * hip_angle]
    height = 2 * leg * np.cos(hip_angle) + 0.05 + clearance
    init["free"] = [0.0, 0.0, height, 0.0, 0.0, 0.0]
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init,
                         name="quadruped", contacts=tuple(contacts))


def five_bar_pose(theta_a: float, theta_b: float, upper: float = 0.1,
                  lower: float = 0.2) -> tuple[float, float, np.ndarray]:
    """Knee angles and foot position of a symmetric five-bar leg with coaxial hip motors.

    ``theta_a``, ``theta_b``: the two motor (hip) angles, measured from the hanging direction
    like every revolute joint of this module (the link direction at angle θ is
    ``(sin θ, -cos θ)`` in the plane normal to the hip axis). The knees sit ``upper`` from the
    hip; the two ``lower`` links meet at the foot, taken on the side of the knees away from the
    hip (the leg's working assembly mode). Returns the relative knee angles ``(phi_a, phi_b)``
    (rad, in ``(-π, π]``) and the foot's in-plane position (2,) from the hip.

    With both motors at one angle the upper links overlap and the foot is not fixed by the
    motors (any point ``lower`` from the common knee closes the loop); the leg is then taken
    fully stretched, the configuration where the two branches of its configuration space
    cross (the singular configuration of Brüdigam & Manchester 2020 §5, Fig. 7).
    """
    if not 0.0 < upper < lower:
        raise ValueError(f"a five-bar leg needs 0 < upper < lower, got {upper}, {lower}")

    def d(t):
        return np.array([np.sin(t), -np.cos(t)])

    ka, kb = upper * d(theta_a), upper * d(theta_b)
    mid, half = 0.5 * (ka + kb), 0.5 * (kb - ka)
    h = float(np.linalg.norm(half))
    bisector = d(0.5 * (theta_a + theta_b))
    if h < 1e-12:
        n = bisector
    else:
        n = np.array([-half[1], half[0]]) / h
        if n @ bisector < 0.0:
            n = -n
    foot = mid + np.sqrt(lower ** 2 - h ** 2) * n

    def knee(k, theta):
        u = foot - k
        return float((np.arctan2(u[0], -u[1]) - theta + np.pi) % (2 * np.pi) - np.pi)

    return knee(ka, theta_a), knee(kb, theta_b), foot


def _five_bar(prefix: str, parent: str, hip, axis, upper: float, lower: float,
              upper_mass: float, lower_mass: float, motors, *, actuated: bool = True,
              hip_spring: float = 0.0, hip_rest=(0.0, 0.0), damper: float = 0.0):
    """Bodies, joints and initial coordinates of one five-bar leg (see :func:`five_bar_leg`)."""
    phi_a, phi_b, _ = five_bar_pose(motors[0], motors[1], upper, lower)
    bodies, joints, init = [], [], {}
    for side, theta, phi, rest in (("a", motors[0], phi_a, hip_rest[0]),
                                   ("b", motors[1], phi_b, hip_rest[1])):
        up, low = f"{prefix}upper_{side}", f"{prefix}lower_{side}"
        bodies += [rod(up, upper, upper_mass, 0.01), rod(low, lower, lower_mass, 0.01)]
        joints += [Joint(f"{prefix}hip_{side}", "revolute", parent, up, hip, _top(upper), axis,
                         actuated=actuated, spring=hip_spring, damper=damper,
                         spring_offset=[rest] if hip_spring else None),
                   Joint(f"{prefix}knee_{side}", "revolute", up, low, -_top(upper), _top(lower),
                         axis, damper=damper)]
        init[f"{prefix}hip_{side}"] = [theta]
        init[f"{prefix}knee_{side}"] = [phi]
    # the loop: the lower ends stay on one line parallel to the hip axis (two constraints)
    joints.append(Joint(f"{prefix}foot", "cylindrical_free", f"{prefix}lower_a",
                        f"{prefix}lower_b", -_top(lower), -_top(lower), axis))
    return bodies, joints, init


def five_bar_leg(*, motor_angles=(0.8, -0.8), upper_length: float = 0.1,
                 lower_length: float = 0.2, upper_mass: float = 0.05, lower_mass: float = 0.05,
                 actuated: bool = True, hip_spring: float = 0.0, hip_rest=(0.0, 0.0),
                 damper: float = 0.0) -> MechanismSpec:
    """One Minitaur leg on a fixed hip: a symmetric five-bar linkage (Brüdigam & Manchester
    2020 §5, Fig. 7) turning about the world x axis.

    Two upper links (``upper_length``) hang from coaxial revolute joints at the origin
    (``hip_a``, ``hip_b``: the two direct-drive motors, ``actuated``), a lower link
    (``lower_length``) hangs from each upper link's end (``knee_a``, ``knee_b``), and the
    lower ends are joined at the foot by a ``"cylindrical_free"`` loop joint (``foot``), so
    the leg has 2 degrees of freedom (4 tree coordinates, 2 loop constraints). It starts at
    rest with the motors at ``motor_angles`` (rad from hanging, the knees from
    :func:`five_bar_pose`). ``hip_spring`` (N m/rad) pulls the motors towards ``hip_rest``;
    ``damper`` (N m s/rad) acts on hips and knees.

    The leg passes its singular configuration when the two motor angles are equal: the upper
    links overlap, the leg is fully stretched and the loop constraints lose rank. Hanging
    under gravity with ``motor_angles = (δ, -δ)`` the unpowered leg swings through it twice
    per period.

    Numbers: upper 0.1 m and lower 0.2 m links as in the brief's reading of Kenneally, Topping
    & Koditschek (2016) (not checked against that paper here); ``bullet3``'s
    ``data/quadruped/minitaur.urdf`` has 0.11 m and 0.2 m links of 0.05 kg each, the masses
    used here. The links are solid 1 cm-radius rods (:func:`rod`; the URDF's inertias are
    placeholders).
    """
    bodies, joints, init = _five_bar("", WORLD, np.zeros(3), _X, upper_length, lower_length,
                                     upper_mass, lower_mass, motor_angles, actuated=actuated,
                                     hip_spring=hip_spring, hip_rest=hip_rest, damper=damper)
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init,
                         name="five_bar_leg")


#: Minitaur's legs (front/back, left/right) and their hip positions in the torso frame (m):
#: ``bullet3``'s ``data/quadruped/minitaur.urdf`` puts the motor axes ±0.21 m fore and aft of
#: the chassis centre and the leg planes about ±0.1 m to the sides.
MINITAUR_HIPS = {"front_left": (0.21, 0.1), "front_right": (0.21, -0.1),
                 "back_left": (-0.21, 0.1), "back_right": (-0.21, -0.1)}


def minitaur(*, extension: float = 1.0, friction: float = 1.0, upper_length: float = 0.1,
             lower_length: float = 0.2, link_mass: float = 0.05, chassis_mass: float = 3.2,
             motor_mass: float = 0.25, clearance: float = 0.001) -> MechanismSpec:
    """A Minitaur-like quadruped (Brüdigam & Manchester 2020 §5, Fig. 7; Ghost Robotics'
    direct-drive robot): a torso on a floating joint and four five-bar legs
    (:func:`five_bar_leg`) turning about the torso's lateral (y) axis, each with two coaxial
    actuated hip joints (``{leg}_hip_a``, ``{leg}_hip_b``), two knees and a loop-closing
    ``{leg}_foot`` joint, and a point contact with Coulomb ``friction`` at the foot.

    It starts at rest standing on its feet (``clearance`` m above the ground) with every leg
    vertical and its motors at ``±extension`` rad from hanging (the leg's length is then
    ``upper cos e + sqrt(lower² - upper² sin² e)``, 0.235 m for ``e = 1``). 8 bodies per leg
    plus the torso: 17 bodies, 6 + 4 × 2 = 14 degrees of freedom.

    Numbers from ``bullet3``'s ``data/quadruped/minitaur.urdf`` (Coumans 2017): hips at
    :data:`MINITAUR_HIPS`, chassis 3 kg plus two 0.1 kg side frames (``chassis_mass``, a
    0.33 × 0.14 × 0.07 m box), eight 0.25 kg motors on the hip axes (added to the torso as
    point masses at the hips), 0.05 kg links, lateral friction 1; 6.0 kg in all (the brief
    quotes ~5 kg for the robot, not verified here). Link lengths 0.1 / 0.2 m as in
    :func:`five_bar_leg`. The URDF's inertias are placeholders (unit diagonals): the torso gets
    its box's inertia plus the motors' parallel-axis terms, the links those of 1 cm rods.
    Drive it with :func:`dynamics.maximal.pd_controller` on the eight hip joints.
    """
    torso_shape = Shape("box", (0.33, 0.14, 0.07))
    inertia = torso_shape.inertia(chassis_mass)
    for x, y in MINITAUR_HIPS.values():
        r = np.array([x, y, 0.0])
        inertia = inertia + 2 * motor_mass * (r @ r * np.eye(3) - np.outer(r, r))
    torso_mass = chassis_mass + 8 * motor_mass
    bodies = [Body("torso", torso_mass, inertia, torso_shape)]
    joints = [Joint("free", "floating", WORLD, "torso")]
    contacts, init = [], {}
    y_axis = np.array([0.0, 1.0, 0.0])
    for name, (x, y) in MINITAUR_HIPS.items():
        b, j, i = _five_bar(f"{name}_", "torso", [x, y, 0.0], y_axis, upper_length,
                            lower_length, link_mass, link_mass, (extension, -extension))
        bodies += b
        joints += j
        init.update(i)
        contacts.append(Contact(f"{name}_foot", f"{name}_lower_a", -_top(lower_length),
                                friction=friction))
    _, _, foot = five_bar_pose(extension, -extension, upper_length, lower_length)
    init["free"] = [0.0, 0.0, -foot[1] + clearance, 0.0, 0.0, 0.0]
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init,
                         name="minitaur", contacts=tuple(contacts))


def sphere_stack(n: int = 2, *, radius: float = 0.25, mass: float = 1.0, friction: float = 0.5,
                 n_friction: int = 4, gap: float = 0.0, offset: float = 0.0) -> MechanismSpec:
    """``n`` free spheres (0.25 m, 1 kg) stacked along z on the ground: the lowest one touches
    the ground (``Contact``), each next one rests on the one below (``BodyContact``
    sphere-sphere, Brüdigam et al. 2023 §2, eq. 25-27), ``gap`` m above it and shifted by
    ``offset`` m along x. At rest the contact under sphere ``k`` carries the weight of the
    ``n - k`` spheres above it (counting itself)."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    shape = Shape("sphere", (radius,))
    bodies = tuple(Body(f"sphere{i + 1}", mass, shape.inertia(mass), shape) for i in range(n))
    joints = tuple(Joint(f"free{i + 1}", "floating", WORLD, f"sphere{i + 1}") for i in range(n))
    pos, z, x = {}, radius, 0.0
    for i in range(n):
        pos[f"free{i + 1}"] = [x, 0.0, z, 0.0, 0.0, 0.0]
        step = np.sqrt(max((2 * radius + gap) ** 2 - offset ** 2, 0.0))
        z, x = z + step, x + offset
    contacts = [Contact("ground1", "sphere1", kind="sphere", radius=radius, friction=friction,
                        n_friction=n_friction)]
    contacts += [BodyContact(f"stack{i + 1}", f"sphere{i + 2}", f"sphere{i + 1}", radius,
                             radius, friction=friction, n_friction=n_friction)
                 for i in range(n - 1)]
    return MechanismSpec(bodies, joints, initial_positions=pos, name=f"sphere_stack{n}",
                         contacts=tuple(contacts))


def sphere_collision(*, radius: float = 0.25, mass: float = 1.0, velocity: float = 1.0,
                     gap: float = 0.1, friction: float = 0.0, offset: float = 0.0,
                     gravity: bool = False) -> MechanismSpec:
    """Two free spheres on the x axis, ``gap`` m apart: ``sphere1`` moves at ``velocity`` m/s
    towards ``sphere2`` at rest (``offset``: sideways shift of ``sphere2`` along y, 0 for a
    head-on impact). Without gravity by default; one ``BodyContact`` sphere-sphere."""
    shape = Shape("sphere", (radius,))
    bodies = (Body("sphere1", mass, shape.inertia(mass), shape),
              Body("sphere2", mass, shape.inertia(mass), shape))
    joints = (Joint("free1", "floating", WORLD, "sphere1"),
              Joint("free2", "floating", WORLD, "sphere2"))
    d = 2 * radius + gap
    return MechanismSpec(
        bodies, joints, gravity=[0.0, 0.0, -9.81 if gravity else 0.0],
        initial_positions={"free1": [0.0, 0.0, 0.0, 0, 0, 0],
                           "free2": [d, offset, 0.0, 0, 0, 0]},
        initial_velocities={"free1": [velocity, 0, 0, 0, 0, 0]}, name="sphere_collision",
        contacts=(BodyContact("impact", "sphere1", "sphere2", radius, radius,
                              friction=friction),))


#: Passive elbow of the two patients of :func:`arm_exoskeleton` (our choice; the paper gives no
#: numbers): ``(stiffness N m/rad about the extended arm, damping N m s/rad)``. Spasticity is a
#: velocity-dependent resistance to stretch with raised tone, modelled as a stiffer and much
#: more damped elbow.
PATIENTS = {"healthy": (0.0, 0.1), "spastic": (0.5, 3.0)}


def arm_exoskeleton(patient: str = "healthy", *, shoulder: float = np.pi / 4,
                    elbow: float = -np.pi / 4, shoulder_rate: float = 0.0,
                    elbow_rate: float = 0.0, cuff_spring: float = 200.0,
                    cuff_damper: float = 10.0, offset: float = 0.1) -> MechanismSpec:
    """A 4-DoF arm exoskeleton worn on a human arm (Brüdigam et al. 2023 §5.4, Fig. 14).

    From the paper: the exoskeleton has four degrees of freedom, three at the shoulder and
    upper arm and one at the elbow; its upper-arm and forearm links are attached to the
    human arm by two 3-DoF spring-damper joints with two translational and one rotational
    degree of freedom, which close two connected kinematic loops (Fig. 14b); the shoulder
    and elbow flexion/extension joints are actuated (Appendix E, Algorithm 8). Everything
    else is our choice, since the paper gives no masses, lengths or stiffnesses:

    * human arm (anthropometric values of an adult): upper arm 0.30 m, 2.0 kg, forearm with
      hand 0.30 m, 1.5 kg (solid cylinders of radius 5 and 4 cm); a spherical shoulder at the
      world origin and a revolute elbow with the passive stiffness and damping of
      ``PATIENTS[patient]`` (unactuated: the patient is passive);
    * exoskeleton: its shoulder centre ``offset`` m lateral (+x) of the human one, three
      revolute joints in series about z (``exo_rotation``), y (``exo_abduction``) and x
      (``exo_shoulder``, flexion, actuated) through two 0.2 kg hubs, a 0.30 m, 1.0 kg
      upper-arm link and a 0.30 m, 0.5 kg forearm link on the actuated ``exo_elbow``; the
      links run parallel to the human segments, ``offset`` m beside them;
    * cuffs: ``"planar"`` joints (Table B.2: one translational and two rotational constraint
      rows, so two translations and one rotation stay free) from each exoskeleton link to the
      centre of mass of its human segment, spring ``cuff_spring`` and damper ``cuff_damper``
      on all three free coordinates (one value for N/m and N m/rad, as
      :class:`~dynamics.spec.Joint` takes). The upper cuff's free rotation is about the upper
      arm, its free translations across it (the soft tissue in the cuff). The forearm cuff's
      axis lies at 45° between the forearm and the forward direction: with the axis along or
      across the forearm the loop constraints become dependent (the constraint Jacobian loses
      two ranks) at full extension (``elbow = 0``) or at a right angle (``-π/2``), both
      reached by the rehabilitation trajectory; at 45° they stay independent over the whole
      range of shoulder ``[0, π/2]`` and elbow ``[-π/2, 0]`` (tested). The joint axes of
      arm and exoskeleton are aligned (the offset is along the flexion axis), so a motion in
      the sagittal plane leaves the cuff springs at rest; they act on out-of-plane motion.

    Coordinates: the shoulder flexion ``exo_shoulder`` (and the human ``shoulder`` rotation
    vector's x component) is the angle of the upper arm forward from hanging down; the elbow
    ``exo_elbow`` / ``elbow`` turns about -x, so negative angles flex the forearm forward
    (Algorithm 8's elbow range ``[-π/2, 0]``). The mechanism starts with exoskeleton and arm
    aligned at ``shoulder`` / ``elbow`` with rates ``shoulder_rate`` / ``elbow_rate`` (cuff
    coordinates zero); the mechanism has 36 maximal coordinates and 34 independent
    constraints, i.e. two degrees of freedom, the two actuated joints.
    """
    if patient not in PATIENTS:
        raise ValueError(f"patient must be one of {sorted(PATIENTS)}, got {patient!r}")
    k_elbow, d_elbow = PATIENTS[patient]
    upper, fore = 0.30, 0.30
    hub = Shape("sphere", (0.04,))
    bodies = (Body("exo_hub1", 0.2, hub.inertia(0.2), hub),
              Body("exo_hub2", 0.2, hub.inertia(0.2), hub),
              rod("exo_upper", upper, 1.0, 0.02), rod("exo_fore", fore, 0.5, 0.02),
              rod("arm_upper", upper, 2.0, 0.05), rod("arm_fore", fore, 1.5, 0.04))
    centre = np.array([offset, 0.0, 0.0])
    beside = np.array([-offset, 0.0, 0.0])           # from an exo link to its human segment
    fore_axis = np.array([0.0, -1.0, 1.0]) / np.sqrt(2.0)
    joints = (
        Joint("exo_rotation", "revolute", WORLD, "exo_hub1", centre, np.zeros(3), _Z),
        Joint("exo_abduction", "revolute", "exo_hub1", "exo_hub2", np.zeros(3), np.zeros(3),
              _Y),
        Joint("exo_shoulder", "revolute", "exo_hub2", "exo_upper", np.zeros(3), _top(upper),
              _X, actuated=True),
        Joint("exo_elbow", "revolute", "exo_upper", "exo_fore", -_top(upper), _top(fore), -_X,
              actuated=True),
        Joint("shoulder", "spherical", WORLD, "arm_upper", np.zeros(3), _top(upper)),
        Joint("elbow", "revolute", "arm_upper", "arm_fore", -_top(upper), _top(fore), -_X,
              spring=k_elbow, damper=d_elbow),
        Joint("cuff_upper", "planar", "exo_upper", "arm_upper", beside, np.zeros(3), _Z,
              spring=cuff_spring, damper=cuff_damper),
        Joint("cuff_fore", "planar", "exo_fore", "arm_fore", beside, np.zeros(3), fore_axis,
              spring=cuff_spring, damper=cuff_damper),
    )
    pos = {"exo_shoulder": [shoulder], "exo_elbow": [elbow], "shoulder": [shoulder, 0.0, 0.0],
           "elbow": [elbow]}
    vel = {"exo_shoulder": [shoulder_rate], "exo_elbow": [elbow_rate],
           "shoulder": [shoulder_rate, 0.0, 0.0], "elbow": [elbow_rate]}
    return MechanismSpec(bodies, joints, initial_positions=pos, initial_velocities=vel,
                         name=f"arm_exoskeleton_{patient}")


#: The Unitree A1's legs: name -> (fore/aft sign, left/right sign). unitree_ros'
#: ``a1_description/urdf/a1.urdf`` calls them FR, FL, RR, RL; the paper's Algorithm 6 pairs
#: front-right with back-left and front-left with back-right.
A1_LEGS = {"FR": (1, -1), "FL": (1, 1), "RR": (-1, -1), "RL": (-1, 1)}
#: A1 numbers read from unitreerobotics/unitree_ros ``robots/a1_description/urdf/a1.urdf``
#: (lengths in m, masses in kg, inertias in kg m² about the centre of mass in the link frame,
#: which the URDF does not rotate). Centres of mass and products of inertia are those of the
#: front-right leg; the others mirror them (y for left legs, x for the hip links of rear legs).
_A1_TRUNK = (6.0, (0.0, 0.0041, -0.0005),
             ((0.0158533, -3.66e-05, -6.11e-05), (-3.66e-05, 0.0377999, -2.75e-05),
              (-6.11e-05, -2.75e-05, 0.0456542)))
_A1_HIP = (0.696, (-0.003311, -0.000635, 3.1e-05),
           ((0.000469246, 9.409e-06, -3.42e-07), (9.409e-06, 0.00080749, 4.66e-07),
            (-3.42e-07, 4.66e-07, 0.000552929)))
_A1_THIGH = (1.013, (-0.003237, 0.022327, -0.027326),
             ((0.005529065, -4.825e-06, 0.000343869), (-4.825e-06, 0.005139339, -2.2448e-05),
              (0.000343869, -2.2448e-05, 0.001367788)))
_A1_CALF = (0.166, (0.006435, 0.0, -0.107388),
            ((0.002997972, 0.0, -0.000141163), (0.0, 0.003014022, 0.0),
             (-0.000141163, 0.0, 3.2426e-05)))
_A1_FOOT_MASS, _A1_FOOT_INERTIA = 0.06, 9.6e-06
_A1_HIP_X, _A1_HIP_Y, _A1_THIGH_Y, _A1_LINK = 0.1805, 0.047, 0.0838, 0.2


def _mirror(com, inertia, sx: int, sy: int):
    """Centre of mass and inertia of a link mirrored in x (``sx = -1``) and / or y."""
    s = np.array([sx, sy, 1.0])
    return np.array(com) * s, np.array(inertia) * np.outer(s, s)


def _lumped(parts):
    """Mass, centre of mass and inertia (about it) of rigidly joined ``(m, com, inertia)``."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * np.asarray(p[1]) for p in parts) / m
    J = np.zeros((3, 3))
    for mi, ci, Ji in parts:
        r = np.asarray(ci) - c
        J += np.asarray(Ji) + mi * (r @ r * np.eye(3) - np.outer(r, r))
    return m, c, J


def a1_foot_positions(thigh: float, calf: float, hip: float = 0.0) -> np.ndarray:
    """Foot centres (4, 3) of :func:`a1_quadruped` in the trunk's URDF link frame (m) for
    equal joint angles on every leg, in the order of :data:`A1_LEGS`."""
    out = []
    for sx, sy in A1_LEGS.values():
        knee = _A1_LINK * np.array([-np.sin(thigh), 0.0, -np.cos(thigh)])
        foot = knee + _A1_LINK * np.array([-np.sin(thigh + calf), 0.0, -np.cos(thigh + calf)])
        p = np.array([0.0, sy * _A1_THIGH_Y, 0.0]) + foot
        ch, sh = np.cos(hip), np.sin(hip)
        p = np.array([p[0], ch * p[1] - sh * p[2], sh * p[1] + ch * p[2]])
        out.append(np.array([sx * _A1_HIP_X, sy * _A1_HIP_Y, 0.0]) + p)
    return np.array(out)


def a1_quadruped(*, thigh: float = 1.0, calf: float = -1.5, friction: float = 0.8,
                 n_friction: int = 4, clearance: float = 0.0) -> MechanismSpec:
    """A quadruped of the Unitree A1's build (Brüdigam et al. 2023 §5.4, Fig. 13, Appendix E).

    A trunk on a ``"floating"`` joint and four legs of three actuated revolute joints each:
    ``{leg}_hip`` (abduction, about the trunk's x axis), ``{leg}_thigh`` and ``{leg}_calf``
    (about y), legs ``FR, FL, RR, RL`` (:data:`A1_LEGS`); 13 bodies, 6 + 12 = 18 degrees of
    freedom. Each foot is a point contact with the ground (Coulomb ``friction``, a
    linearized cone of ``n_friction`` directions, Brüdigam et al. 2023 eq. 25-27).

    Numbers from unitree_ros' ``robots/a1_description/urdf/a1.urdf`` (Unitree's description
    of the A1): trunk 6.0 kg, hip links 0.696 kg, thighs 1.013 kg, calves 0.166 kg, foot
    spheres 0.06 kg (lumped into the calves, parallel-axis theorem), 13.74 kg in all; their
    centres of mass and full inertia tensors; hip axes at (±0.1805, ±0.047, 0) m from the
    trunk's link origin, thigh axes 0.0838 m further out, thigh and calf 0.2 m long; the axis
    directions (x, y, y). The URDF's joint damping (0.01), friction, limits and the 2 cm foot
    collision sphere are left out: the contact point is the foot sphere's centre (the robot
    stands 2 cm lower than the real one; the friction acts 2 cm higher on the calf). The
    friction coefficient 0.8 is the default of the A1 environment (``quadruped_sampling``)
    of Dojo.jl, the authors' later simulator; the paper does not state it.

    It starts at rest with all hip joints at 0, thighs at ``thigh`` and calves at ``calf``
    (rad; Algorithm 7's standing parameters are thigh 1, calf -1.5) and the feet
    ``clearance`` m above the ground.
    """
    parts_trunk = _A1_TRUNK
    trunk_com = np.array(parts_trunk[1])
    bodies = [Body("trunk", parts_trunk[0], np.array(parts_trunk[2]),
                   Shape("box", (0.267, 0.194, 0.114)))]
    joints = [Joint("free", "floating", WORLD, "trunk")]
    contacts, init = [], {}
    foot = (_A1_FOOT_MASS, (0.0, 0.0, -_A1_LINK), _A1_FOOT_INERTIA * np.eye(3))
    for leg, (sx, sy) in A1_LEGS.items():
        hip_com, hip_J = _mirror(_A1_HIP[1], _A1_HIP[2], sx, -sy)
        thigh_com, thigh_J = _mirror(_A1_THIGH[1], _A1_THIGH[2], 1, -sy)
        calf_m, calf_com, calf_J = _lumped([_A1_CALF, foot])
        names = (f"{leg}_hip", f"{leg}_thigh", f"{leg}_calf")
        bodies += [Body(names[0], _A1_HIP[0], hip_J), Body(names[1], _A1_THIGH[0], thigh_J),
                   Body(names[2], calf_m, calf_J)]
        hip_at = np.array([sx * _A1_HIP_X, sy * _A1_HIP_Y, 0.0])
        joints += [
            Joint(names[0], "revolute", "trunk", names[0], hip_at - trunk_com, -hip_com, _X,
                  actuated=True),
            Joint(names[1], "revolute", names[0], names[1],
                  np.array([0.0, sy * _A1_THIGH_Y, 0.0]) - hip_com, -thigh_com, _Y,
                  actuated=True),
            Joint(names[2], "revolute", names[1], names[2],
                  np.array([0.0, 0.0, -_A1_LINK]) - thigh_com, -calf_com, _Y, actuated=True)]
        contacts.append(Contact(f"{leg}_foot", names[2],
                                np.array([0.0, 0.0, -_A1_LINK]) - calf_com,
                                friction=friction, n_friction=n_friction))
        init[names[0]], init[names[1]], init[names[2]] = [0.0], [thigh], [calf]
    lowest = a1_foot_positions(thigh, calf)[:, 2].min()
    init["free"] = [0.0, 0.0, trunk_com[2] - lowest + clearance, 0.0, 0.0, 0.0]
    return MechanismSpec(tuple(bodies), tuple(joints), initial_positions=init,
                         name="a1_quadruped", contacts=tuple(contacts))
