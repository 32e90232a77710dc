"""Write the URDF corpus of ``tests/dynamics/test_urdf_corpus.py`` (run from the repository
root: ``.venv/bin/python tests/dynamics/urdf_corpus/generate.py``).

The robots are written for these tests, shaped like the descriptions robot vendors publish
(not copied from any of them): links with solid box / cylinder / sphere inertias of plausible
masses, inertial origins off the joint axes, ``package://`` meshes in ``<visual>`` and
``<collision>``, ``<limit>``, ``<dynamics>``, ``<transmission>`` and ``<gazebo>`` elements,
and the patterns that broke loading (the failure classes of issue 24): fixed joints with
``<axis xyz="0 0 0"/>``, massless sensor / tool / flange links (no ``<inertial>`` or mass 0)
attached by fixed joints, massless links between two moving joints, a point mass, a single
link, an empty robot, ``planar`` / ``floating`` joints and ``<mimic>``.
"""
from __future__ import annotations

from math import pi
from pathlib import Path

HERE = Path(__file__).parent
PKG = "package://corpus_description/meshes"


def _v(a) -> str:
    return " ".join(f"{float(x):.6g}" for x in a)


def _solid(kind: str, m: float, dims) -> tuple[float, float, float]:
    """Principal moments of a solid box (x, y, z), cylinder (r, h along z) or sphere (r)."""
    if kind == "box":
        x, y, z = dims
        return m / 12 * (y * y + z * z), m / 12 * (x * x + z * z), m / 12 * (x * x + y * y)
    if kind == "cylinder":
        r, h = dims
        t = m * (3 * r * r + h * h) / 12
        return t, t, m * r * r / 2
    r = dims[0]
    return (0.4 * m * r * r,) * 3


class Robot:
    """Collects ``<link>`` and ``<joint>`` elements of one URDF."""

    def __init__(self, name: str):
        self.name, self.items = name, []

    def link(self, name, m=None, kind="box", dims=(0.1, 0.1, 0.1), com=(0, 0, 0),
             rpy=(0, 0, 0), inertia=None, mesh=True):
        """A link; ``m=None``: no ``<inertial>``; ``inertia`` overrides the solid's moments
        (6 values ixx ixy ixz iyy iyz izz)."""
        body = []
        if m is not None:
            if inertia is None:
                ixx, iyy, izz = _solid(kind, m, dims)
                inertia = (ixx, 0, 0, iyy, 0, izz)
            keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            body.append(f'    <inertial>\n      <origin xyz="{_v(com)}" rpy="{_v(rpy)}"/>\n'
                        f'      <mass value="{m:.6g}"/>\n      <inertia '
                        + " ".join(f'{k}="{x:.6g}"' for k, x in zip(keys, inertia, strict=True))
                        + "/>\n    </inertial>")
        if mesh:
            body.append(f'    <visual>\n      <origin xyz="0 0 0" rpy="0 0 0"/>\n      <geometry>'
                        f'<mesh filename="{PKG}/visual/{name}.dae" scale="1 1 1"/></geometry>\n'
                        f'      <material name="grey"><color rgba="0.6 0.6 0.6 1"/></material>\n'
                        f'    </visual>\n    <collision>\n      <geometry><mesh filename='
                        f'"{PKG}/collision/{name}.stl"/></geometry>\n    </collision>')
        inner = "\n".join(body)
        self.items.append(f'  <link name="{name}">\n{inner}\n  </link>' if inner
                          else f'  <link name="{name}"/>')

    def joint(self, name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None,
              limit=None, damping=None, mimic=None):
        """A joint; revolute / prismatic joints get a ``<limit>`` (default ±2.9, or ``limit``
        = (lower, upper))."""
        lines = [f'  <joint name="{name}" type="{kind}">', f'    <parent link="{parent}"/>',
                 f'    <child link="{child}"/>', f'    <origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/>']
        if axis is not None:
            lines.append(f'    <axis xyz="{_v(axis)}"/>')
        if kind in ("revolute", "prismatic") or limit is not None:
            lo, hi = limit or (-2.9, 2.9)
            lines.append(f'    <limit lower="{lo:.6g}" upper="{hi:.6g}" effort="80" '
                         'velocity="2.5"/>')
        if damping is not None:
            lines.append(f'    <dynamics damping="{damping:.6g}" friction="0.05"/>')
        if mimic is not None:
            lines.append(f'    <mimic joint="{mimic}" multiplier="1" offset="0"/>')
        lines.append("  </joint>")
        self.items.append("\n".join(lines))

    def extra(self, text: str):
        self.items.append(text)

    def text(self) -> str:
        return (f'<?xml version="1.0"?>\n<!-- written for tests/dynamics/test_urdf_corpus.py by '
                f'generate.py -->\n<robot name="{self.name}">\n' + "\n".join(self.items)
                + "\n</robot>\n")


def transmission(joint: str) -> str:
    return (f'  <transmission name="{joint}_trans">\n'
            '    <type>transmission_interface/SimpleTransmission</type>\n'
            f'    <joint name="{joint}"><hardwareInterface>hardware_interface/EffortJointInterface'
            f'</hardwareInterface></joint>\n    <actuator name="{joint}_motor">'
            '<mechanicalReduction>100</mechanicalReduction></actuator>\n  </transmission>')


def arm7(r: Robot, parent: str, prefix: str = "", scale: float = 1.0, damping=0.1,
         xyz=(0, 0, 0), rpy=(0, 0, 0)):
    """A 7-DOF arm (alternating z / y axes through rpy offsets) hanging from ``parent``."""
    s = scale
    masses = (3.6, 3.4, 3.1, 2.7, 1.9, 1.4, 0.6)
    lengths = (0.33, 0.0, 0.32, 0.0, 0.38, 0.0, 0.1)
    for i in range(7):
        m = masses[i] * s ** 3
        L = max(lengths[i], 0.12) * s
        r.link(f"{prefix}link{i + 1}", m, "cylinder", (0.06 * s, L),
               com=(0.003 * s * (i % 3 - 1), -0.02 * s * (i % 2), 0.4 * L),
               rpy=(0.0, 0.05 * i, 0.0))
    for i in range(7):
        p = parent if i == 0 else f"{prefix}link{i}"
        x = (xyz if i == 0 else (0, 0, lengths[i - 1] * s) if i % 2 == 0
             else (0, -0.05 * s, 0.06 * s))
        ro = rpy if i == 0 else (pi / 2, 0, 0) if i % 2 else (-pi / 2, 0, 0)
        r.joint(f"{prefix}joint{i + 1}", "revolute", p, f"{prefix}link{i + 1}", x, ro,
                (0, 0, 1), limit=(-2.8, 2.8), damping=damping)


def robot_arm7() -> Robot:
    r = Robot("arm7_flange_camera")
    r.link("world", mesh=False)
    r.link("base_link", 4.2, "cylinder", (0.09, 0.14), com=(-0.01, 0, 0.06))
    r.joint("world_to_base", "fixed", "world", "base_link", (0, 0, 0.02), axis=(0, 0, 0))
    arm7(r, "base_link", xyz=(0, 0, 0.14))
    r.link("flange", mesh=False)                                  # massless, mid-chain
    r.joint("flange_joint", "fixed", "link7", "flange", (0, 0, 0.107), (0, 0, -pi / 4),
            axis=(0, 0, 0))
    r.link("tool", 0.73, "box", (0.2, 0.05, 0.1), com=(0, 0, 0.05))
    r.joint("tool_mount", "fixed", "flange", "tool", (0, 0, 0.0), axis=(0, 0, 0))
    r.link("tcp", mesh=False)
    r.joint("tcp_joint", "fixed", "tool", "tcp", (0, 0, 0.103), axis=(0, 0, 0))
    r.link("camera_mount", 0.05, "box", (0.03, 0.09, 0.02), com=(0, 0, 0.01))
    r.joint("camera_mount_joint", "fixed", "link7", "camera_mount", (0.05, 0, 0.09),
            axis=(0, 0, 0))
    r.link("camera_link", mesh=False)
    r.joint("camera_joint", "fixed", "camera_mount", "camera_link", (0.01, 0, 0.02),
            (0, -0.3, 0))
    r.link("camera_optical_frame", mesh=False)
    r.joint("camera_optical_joint", "fixed", "camera_link", "camera_optical_frame",
            rpy=(-pi / 2, 0, -pi / 2), axis=(0, 0, 0))
    for i in range(7):
        r.extra(transmission(f"joint{i + 1}"))
    r.extra('  <gazebo reference="link7"><material>Gazebo/Grey</material></gazebo>')
    return r


def robot_gripper() -> Robot:
    r = Robot("gripper_2finger_mimic")
    r.link("gripper_base", 0.9, "box", (0.08, 0.14, 0.07), com=(0, 0, 0.035))
    r.link("palm_pad", 0.04, "box", (0.03, 0.1, 0.005))
    r.joint("palm_pad_joint", "fixed", "gripper_base", "palm_pad", (0, 0, 0.07), axis=(0, 0, 0))
    for side, sgn in (("left", 1), ("right", -1)):
        r.link(f"{side}_finger", 0.09, "box", (0.02, 0.015, 0.05), com=(0, -sgn * 0.004, 0.025))
        r.joint(f"{side}_finger_joint", "prismatic", "gripper_base", f"{side}_finger",
                (0, sgn * 0.01, 0.07), (0.6, 0, 0), axis=(0, sgn, 0), limit=(0.0, 0.04),
                damping=0.2,
                mimic="left_finger_joint" if side == "right" else None)
        r.link(f"{side}_fingertip", mesh=False)
        r.joint(f"{side}_fingertip_joint", "fixed", f"{side}_finger", f"{side}_fingertip",
                (0, 0, 0.05))
    r.link("grasp_frame", mesh=False)
    r.joint("grasp_frame_joint", "fixed", "gripper_base", "grasp_frame", (0, 0, 0.13))
    return r


def robot_hand() -> Robot:
    r = Robot("hand_16dof")
    r.link("hand_root", mesh=False)
    r.link("palm", 0.45, "box", (0.09, 0.03, 0.11), com=(0, 0.005, 0.05))
    r.joint("hand_mount", "fixed", "hand_root", "palm", axis=(0, 0, 0))
    fingers = {"index": (0.03, 0.105, 0.0), "middle": (0.0, 0.11, 0.0),
               "ring": (-0.03, 0.105, 0.0), "thumb": (0.04, 0.03, 0.4)}
    for f, (x, z, yaw) in fingers.items():
        lens = (0.045, 0.03, 0.025) if f != "thumb" else (0.04, 0.032, 0.028)
        r.link(f"{f}_knuckle", 0.012, "box", (0.012, 0.012, 0.014), com=(0, 0, 0.006))
        r.joint(f"{f}_abd", "revolute", "palm", f"{f}_knuckle", (x, 0.0, z), (0, 0, yaw),
                (0, 1, 0) if f != "thumb" else (0, 0, 1), limit=(-0.4, 0.4), damping=0.02)
        prev, zoff = f"{f}_knuckle", 0.014
        for k, (seg, L) in enumerate(zip(("proximal", "middle", "distal"), lens, strict=True)):
            name = f"{f}_{seg}"
            r.link(name, 0.035 - 0.008 * k, "cylinder", (0.009, L), com=(0, 0.001, L / 2))
            r.joint(f"{f}_{('mcp', 'pip', 'dip')[k]}", "revolute", prev, name, (0, 0, zoff),
                    axis=(1, 0, 0), limit=(0.0, 1.6), damping=0.02)
            prev, zoff = name, L
        r.link(f"{f}_tip", mesh=False)
        r.joint(f"{f}_tip_joint", "fixed", prev, f"{f}_tip", (0, 0, lens[-1]), axis=(0, 0, 0))
    return r


def leg3(r: Robot, trunk: str, leg: str, x: float, y: float):
    sy = 1 if y > 0 else -1
    r.link(f"{leg}_hip", 0.65, "cylinder", (0.045, 0.08), com=(-0.005 * (1 if x > 0 else -1),
                                                             0.01 * sy, 0), rpy=(pi / 2, 0, 0))
    r.joint(f"{leg}_hip_joint", "revolute", trunk, f"{leg}_hip", (x, y, 0), axis=(1, 0, 0),
            limit=(-0.8, 0.8), damping=0.05)
    r.link(f"{leg}_thigh", 1.0, "box", (0.04, 0.035, 0.22), com=(-0.003, -0.02 * sy, -0.03))
    r.joint(f"{leg}_thigh_joint", "revolute", f"{leg}_hip", f"{leg}_thigh", (0, 0.08 * sy, 0),
            axis=(0, 1, 0), limit=(-1.5, 3.4), damping=0.05)
    r.link(f"{leg}_calf", 0.16, "box", (0.02, 0.016, 0.21), com=(0.006, 0, -0.11))
    r.joint(f"{leg}_calf_joint", "revolute", f"{leg}_thigh", f"{leg}_calf", (0, 0, -0.21),
            axis=(0, 1, 0), limit=(-2.7, -0.9), damping=0.05)
    r.link(f"{leg}_foot", 0.06, "sphere", (0.022,))
    r.joint(f"{leg}_foot_joint", "fixed", f"{leg}_calf", f"{leg}_foot", (0, 0, -0.21),
            axis=(0, 0, 0))


def robot_quadruped() -> Robot:
    r = Robot("quadruped")
    r.link("trunk", 6.5, "box", (0.37, 0.19, 0.11), com=(0.012, 0.002, -0.0005))
    r.link("imu_link", mesh=False)
    r.joint("imu_joint", "fixed", "trunk", "imu_link", (-0.02, 0, 0.01), axis=(0, 0, 0))
    for leg, x, y in (("FR", 0.19, -0.05), ("FL", 0.19, 0.05), ("RR", -0.19, -0.05),
                      ("RL", -0.19, 0.05)):
        leg3(r, "trunk", leg, x, y)
    r.link("head_camera", mesh=False)
    r.joint("head_camera_joint", "fixed", "trunk", "head_camera", (0.2, 0, 0.03),
            (0, 0.2, 0))
    return r


def robot_humanoid() -> Robot:
    r = Robot("humanoid_33dof")
    r.link("pelvis", 8.0, "box", (0.2, 0.3, 0.15), com=(0, 0, 0.02))
    r.link("imu", mesh=False)
    r.joint("imu_joint", "fixed", "pelvis", "imu", (0, 0, 0.05), axis=(0, 0, 0))
    chain = [("waist_yaw", "torso_yaw_link", (0, 0, 0.1), (0, 0, 1), 0.6),
             ("waist_roll", "torso_roll_link", (0, 0, 0.04), (1, 0, 0), 0.5),
             ("waist_pitch", "torso", (0, 0, 0.04), (0, 1, 0), 13.0)]
    prev = "pelvis"
    for jn, ln, xyz, axis, m in chain:
        if ln == "torso":
            r.link(ln, m, "box", (0.2, 0.32, 0.4), com=(0, 0, 0.2))
        else:
            r.link(ln, m, "cylinder", (0.05, 0.06), com=(0, 0, 0.02))
        r.joint(jn, "revolute", prev, ln, xyz, axis=axis, limit=(-0.8, 0.8), damping=0.5)
        prev = ln
    r.link("neck", 0.4, "cylinder", (0.03, 0.08), com=(0, 0, 0.04))
    r.joint("neck_yaw", "revolute", "torso", "neck", (0, 0, 0.42), axis=(0, 0, 1), damping=0.1)
    r.link("head", 2.4, "sphere", (0.1,), com=(0.02, 0, 0.1))
    r.joint("neck_pitch", "revolute", "neck", "head", (0, 0, 0.08), axis=(0, 1, 0), damping=0.1)
    r.link("head_camera", mesh=False)
    r.joint("head_camera_joint", "fixed", "head", "head_camera", (0.09, 0, 0.12), axis=(0, 0, 0))
    for side, sy in (("left", 1), ("right", -1)):
        arm = [("shoulder_pitch", (0, 0.19 * sy, 0.35), (0, 1, 0), 1.2, (0.05, 0.08)),
               ("shoulder_roll", (0, 0.06 * sy, 0), (1, 0, 0), 0.9, (0.04, 0.06)),
               ("shoulder_yaw", (0, 0, -0.05), (0, 0, 1), 1.6, (0.04, 0.2)),
               ("elbow", (0, 0, -0.2), (0, 1, 0), 1.1, (0.035, 0.2)),
               ("wrist_yaw", (0, 0, -0.2), (0, 0, 1), 0.5, (0.03, 0.06)),
               ("wrist_pitch", (0, 0, -0.06), (0, 1, 0), 0.3, (0.03, 0.04)),
               ("wrist_roll", (0, 0, -0.04), (1, 0, 0), 0.45, (0.035, 0.08))]
        prev = "torso"
        for jn, xyz, axis, m, dims in arm:
            ln = f"{side}_{jn}_link"
            r.link(ln, m, "cylinder", dims, com=(0.004, 0.002 * sy, -dims[1] / 2))
            r.joint(f"{side}_{jn}", "revolute", prev, ln, xyz, axis=axis, limit=(-2.5, 2.5),
                    damping=0.2)
            prev = ln
        r.link(f"{side}_palm", mesh=False)
        r.joint(f"{side}_palm_joint", "fixed", prev, f"{side}_palm", (0, 0, -0.08),
                axis=(0, 0, 0))
        r.link(f"{side}_gripper_finger", 0.12, "box", (0.02, 0.05, 0.06), com=(0, 0, -0.03))
        r.joint(f"{side}_gripper", "revolute", f"{side}_palm", f"{side}_gripper_finger",
                (0.02, 0, 0), axis=(0, 1, 0), limit=(0, 1.0), damping=0.05)
        leg = [("hip_yaw", (0, 0.1 * sy, -0.08), (0, 0, 1), 1.3, (0.05, 0.06)),
               ("hip_roll", (0, 0, -0.06), (1, 0, 0), 1.5, (0.05, 0.08)),
               ("hip_pitch", (0, 0, -0.02), (0, 1, 0), 4.8, (0.07, 0.4)),
               ("knee", (0, 0, -0.4), (0, 1, 0), 3.0, (0.055, 0.4)),
               ("ankle_pitch", (0, 0, -0.4), (0, 1, 0), 0.4, (0.03, 0.03)),
               ("ankle_roll", (0, 0, -0.02), (1, 0, 0), 1.2, (0.04, 0.05))]
        prev = "pelvis"
        for jn, xyz, axis, m, dims in leg:
            ln = f"{side}_{jn}_link"
            r.link(ln, m, "cylinder", dims, com=(0.005, 0.003 * sy, -dims[1] / 2))
            r.joint(f"{side}_{jn}", "revolute", prev, ln, xyz, axis=axis, limit=(-2.0, 2.0),
                    damping=0.3)
            prev = ln
        r.link(f"{side}_sole", mesh=False)
        r.joint(f"{side}_sole_joint", "fixed", prev, f"{side}_sole", (0.03, 0, -0.06),
                axis=(0, 0, 0))
    return r


def robot_mobile_manipulator() -> Robot:
    r = Robot("mobile_manipulator")
    r.link("base_footprint", mesh=False)
    r.link("base_link", 28.0, "box", (0.6, 0.5, 0.25), com=(-0.02, 0, 0.0))
    r.joint("base_footprint_joint", "fixed", "base_footprint", "base_link", (0, 0, 0.16),
            axis=(0, 0, 0))
    for side, sy in (("left", 1), ("right", -1)):
        r.link(f"{side}_wheel", 1.3, "cylinder", (0.08, 0.04), rpy=(pi / 2, 0, 0))
        r.joint(f"{side}_wheel_joint", "continuous", "base_link", f"{side}_wheel",
                (0.05, 0.27 * sy, -0.08), axis=(0, 1, 0), damping=0.05)
    for end, sx in (("front", 1), ("rear", -1)):
        r.link(f"{end}_caster_swivel", 0.2, "box", (0.04, 0.03, 0.05), com=(-0.01, 0, -0.02))
        r.joint(f"{end}_caster_swivel_joint", "continuous", "base_link", f"{end}_caster_swivel",
                (0.25 * sx, 0, -0.11), axis=(0, 0, 1), damping=0.01)
        r.link(f"{end}_caster_wheel", 0.15, "cylinder", (0.03, 0.02), rpy=(pi / 2, 0, 0))
        r.joint(f"{end}_caster_wheel_joint", "continuous", f"{end}_caster_swivel",
                f"{end}_caster_wheel", (-0.03, 0, -0.04), axis=(0, 1, 0), damping=0.01)
    r.link("laser", mesh=False)
    r.joint("laser_joint", "fixed", "base_link", "laser", (0.28, 0, 0.1), axis=(0, 0, 0))
    r.link("torso_lift", 9.0, "box", (0.2, 0.2, 0.6), com=(0, 0, 0.3))
    r.joint("torso_lift_joint", "prismatic", "base_link", "torso_lift", (-0.1, 0, 0.13),
            axis=(0, 0, 1), limit=(0.0, 0.4), damping=10.0)
    r.link("arm_mount", mesh=False)
    r.joint("arm_mount_joint", "fixed", "torso_lift", "arm_mount", (0.12, 0, 0.55),
            (0, 0, 0.1), axis=(0, 0, 0))
    arm = [("shoulder_pan", (0, 0, 0.05), (0, 0, 0), (0, 0, 1), 2.3, (0.06, 0.1)),
           ("shoulder_lift", (0.08, 0, 0.05), (0, 0, 0), (0, 1, 0), 2.6, (0.05, 0.3)),
           ("upperarm_roll", (0.0, 0, 0.3), (0, 0, 0), (0, 0, 1), 1.7, (0.045, 0.15)),
           ("elbow_flex", (0.0, 0, 0.15), (0, 0, 0), (0, 1, 0), 1.6, (0.045, 0.25)),
           ("forearm_roll", (0.0, 0, 0.25), (0, 0, 0), (0, 0, 1), 1.1, (0.04, 0.12)),
           ("wrist_flex", (0.0, 0, 0.12), (0, 0, 0), (0, 1, 0), 0.9, (0.04, 0.08))]
    prev = "arm_mount"
    for jn, xyz, rpy, axis, m, dims in arm:
        ln = f"{jn}_link"
        r.link(ln, m, "cylinder", dims, com=(0.01, 0.002, dims[1] / 2))
        r.joint(f"{jn}_joint", "revolute", prev, ln, xyz, rpy, axis, damping=0.3)
        prev = ln
    r.link("gripper_link", 0.8, "box", (0.06, 0.1, 0.08), com=(0, 0, 0.04))
    r.joint("gripper_mount", "fixed", prev, "gripper_link", (0, 0, 0.08), axis=(0, 0, 0))
    r.link("grasp_point", mesh=False)
    r.joint("grasp_point_joint", "fixed", "gripper_link", "grasp_point", (0, 0, 0.12))
    return r


def robot_planar_base() -> Robot:
    r = Robot("mobile_base_planar")
    r.link("odom", mesh=False)
    r.link("base", 15.0, "box", (0.5, 0.4, 0.2), com=(0.01, 0, 0.1))
    r.joint("base_planar", "planar", "odom", "base", axis=(0, 0, 1))
    r.link("mast", 3.0, "cylinder", (0.05, 0.5), com=(0, 0, 0.25))
    r.joint("mast_yaw", "continuous", "base", "mast", (0.1, 0, 0.2), axis=(0, 0, 1),
            damping=0.1)
    r.link("boom", 1.5, "box", (0.4, 0.05, 0.05), com=(0.2, 0, 0))
    r.joint("boom_pitch", "revolute", "mast", "boom", (0, 0, 0.5), axis=(0, 1, 0), damping=0.1)
    r.link("boom_tip", mesh=False)
    r.joint("boom_tip_joint", "fixed", "boom", "boom_tip", (0.4, 0, 0), axis=(0, 0, 0))
    return r


def robot_floating_crate() -> Robot:
    r = Robot("floating_crate")
    r.link("world", mesh=False)
    r.link("crate", 5.0, "box", (0.4, 0.3, 0.25), com=(0.02, -0.01, 0.0))
    r.joint("crate_free", "floating", "world", "crate", (0, 0, 1.0), axis=(0, 0, 0))
    r.link("lid", 0.8, "box", (0.4, 0.3, 0.02), com=(0, 0.15, 0))
    r.joint("lid_hinge", "revolute", "crate", "lid", (0, -0.15, 0.135), axis=(1, 0, 0),
            limit=(0, 2.0))
    r.link("marker", mesh=False)
    r.joint("marker_joint", "fixed", "crate", "marker", (0.2, 0, 0.125), axis=(0, 0, 0))
    return r


def robot_pan_tilt() -> Robot:
    r = Robot("pan_tilt_zero_axis")
    r.link("world", mesh=False)
    r.link("mount", 0.6, "box", (0.1, 0.1, 0.04))
    r.joint("mount_joint", "fixed", "world", "mount", (0, 0, 0.5), (pi, 0, 0), axis=(0, 0, 0))
    r.link("pan", 0.3, "cylinder", (0.04, 0.05), com=(0, 0, 0.02))
    r.joint("pan_joint", "continuous", "mount", "pan", (0, 0, 0.02), axis=(0, 0, 1))
    r.link("tilt_bracket", 0.12, "box", (0.02, 0.1, 0.06), com=(0, 0, 0.03))
    r.joint("bracket_joint", "fixed", "pan", "tilt_bracket", (0, 0, 0.05), axis=(0, 0, 0))
    r.link("tilt", 0.4, "box", (0.06, 0.08, 0.05), com=(0.01, 0, 0.0))
    r.joint("tilt_joint", "revolute", "tilt_bracket", "tilt", (0, 0, 0.06), axis=(0, 1, 0))
    r.link("lens", 0.05, "cylinder", (0.015, 0.03), rpy=(0, pi / 2, 0))
    r.joint("lens_joint", "fixed", "tilt", "lens", (0.045, 0, 0), axis=(0, 0, 0))
    r.link("optical_frame", mesh=False)
    r.joint("optical_joint", "fixed", "lens", "optical_frame", (0.015, 0, 0),
            (-pi / 2, 0, -pi / 2), axis=(0, 0, 0))
    return r


def robot_massless_chain() -> Robot:
    """Massless links inside fixed chains, a mass-0 ``<inertial>``, a point mass welded to a
    link, a massless joint frame carrying its mesh link, and a massless spacer with a moving
    child."""
    r = Robot("massless_fixed_chain")
    r.link("base", 2.0, "box", (0.2, 0.2, 0.1))
    r.link("link1_frame", mesh=False)                           # joint frame: massless top
    r.joint("joint1", "revolute", "base", "link1_frame", (0, 0, 0.05), axis=(0, 0, 1))
    r.link("link1", 1.8, "cylinder", (0.05, 0.3), com=(0, 0, 0.15))
    r.joint("link1_mesh", "fixed", "link1_frame", "link1", (0, 0, 0), (0, 0, 0.3))
    r.link("link1_cover", 0.2, "box", (0.1, 0.02, 0.2), com=(0, 0.01, 0.1))
    r.joint("link1_cover_joint", "fixed", "link1", "link1_cover", (0.05, 0, 0.05))
    r.link("spacer", 0.0, "box", (0.05, 0.05, 0.05))               # mass 0 inertial
    r.joint("spacer_joint", "fixed", "link1", "spacer", (0, 0, 0.3), (0.2, 0, 0),
            axis=(0, 0, 0))
    r.link("link2", 1.4, "box", (0.05, 0.05, 0.35), com=(0, 0.01, 0.17))
    r.joint("joint2", "revolute", "spacer", "link2", (0, 0.02, 0.03), axis=(0, 1, 0))
    r.link("adapter", mesh=False)                                   # massless, mid-chain
    r.joint("adapter_joint", "fixed", "link2", "adapter", (0, 0, 0.35), (0, 0, pi / 6),
            axis=(0, 0, 0))
    r.link("ft_sensor", 0.3, "cylinder", (0.04, 0.03), com=(0, 0, 0.015))
    r.joint("ft_sensor_joint", "fixed", "adapter", "ft_sensor", (0, 0, 0.01), axis=(0, 0, 0))
    r.link("ft_sensor_frame", mesh=False)
    r.joint("ft_sensor_frame_joint", "fixed", "ft_sensor", "ft_sensor_frame", (0, 0, 0.03),
            axis=(0, 0, 0))
    r.link("led", 0.02, com=(0.01, 0, 0), inertia=(0, 0, 0, 0, 0, 0), mesh=False)  # point mass
    r.joint("led_joint", "fixed", "adapter", "led", (0.03, 0.0, 0.0), axis=(0, 0, 0))
    r.link("link3", 0.7, "box", (0.04, 0.04, 0.2), com=(0, 0, 0.1))
    r.joint("joint3", "revolute", "adapter", "link3", (0, 0, 0.05), axis=(1, 0, 0))
    r.link("tool_tip", mesh=False)
    r.joint("tool_tip_joint", "fixed", "link3", "tool_tip", (0, 0, 0.2), axis=(0, 0, 0))
    return r


def robot_universal_wrist() -> Robot:
    """A 6-DOF arm whose wrist is three revolute joints with two massless links between them
    (failure class 3)."""
    r = Robot("universal_wrist_arm")
    r.link("base_link", mesh=False)
    shoulder = [("shoulder_pan", (0, 0, 0.1), (0, 0, 1), 3.0, (0.06, 0.12)),
                ("shoulder_lift", (0, 0.08, 0.12), (0, 1, 0), 4.0, (0.05, 0.42)),
                ("elbow", (0, -0.06, 0.42), (0, 1, 0), 2.2, (0.04, 0.39))]
    prev = "base_link"
    for jn, xyz, axis, m, dims in shoulder:
        ln = f"{jn}_link"
        r.link(ln, m, "cylinder", dims, com=(0.0, 0.01, dims[1] / 2))
        r.joint(jn, "revolute", prev, ln, xyz, axis=axis)
        prev = ln
    r.link("wrist_cross", mesh=False)
    r.joint("wrist_1", "revolute", prev, "wrist_cross", (0, 0, 0.39), axis=(0, 1, 0))
    r.link("wrist_yoke", mesh=False)
    r.joint("wrist_2", "revolute", "wrist_cross", "wrist_yoke", axis=(0, 0, 1))
    r.link("wrist_3_link", 0.35, "cylinder", (0.04, 0.05), com=(0, 0.01, 0.03))
    r.joint("wrist_3", "revolute", "wrist_yoke", "wrist_3_link", (0, 0, 0.09), axis=(1, 0, 0))
    r.link("tool0", mesh=False)
    r.joint("tool0_joint", "fixed", "wrist_3_link", "tool0", (0, 0, 0.08), axis=(0, 0, 0))
    return r


def robot_point_mass() -> Robot:
    r = Robot("point_mass_double_pendulum")
    r.link("pivot", mesh=False)
    r.link("bob1", 1.0, com=(0, 0, -0.5), inertia=(0, 0, 0, 0, 0, 0), mesh=False)
    r.joint("swing1", "continuous", "pivot", "bob1", axis=(0, 1, 0))
    r.link("bob2", 0.5, com=(0, 0, -0.4), inertia=(0, 0, 0, 0, 0, 0), mesh=False)
    r.joint("swing2", "continuous", "bob1", "bob2", (0, 0, -0.5), axis=(0, 1, 0))
    return r


def robot_coaxial() -> Robot:
    r = Robot("coaxial_massless")
    r.link("base", mesh=False)
    r.link("spinner_frame", mesh=False)
    r.joint("spin_outer", "revolute", "base", "spinner_frame", axis=(0, 0, 1))
    r.link("spinner", 1.0, "cylinder", (0.1, 0.05), com=(0.05, 0, 0))
    r.joint("spin_inner", "revolute", "spinner_frame", "spinner", (0, 0, 0.0), axis=(0, 0, 1))
    return r


def robot_single() -> Robot:
    r = Robot("single_link")
    r.link("body", 2.5, "box", (0.3, 0.2, 0.1), com=(0.01, 0.0, 0.02))
    return r


def robot_leaf() -> Robot:
    r = Robot("massless_leaf")
    r.link("base", mesh=False)
    r.link("arm", 1.0, "box", (0.3, 0.04, 0.04), com=(0.15, 0, 0))
    r.joint("shoulder", "revolute", "base", "arm", axis=(0, 0, 1))
    r.link("probe", mesh=False)
    r.joint("probe_rotation", "continuous", "arm", "probe", (0.3, 0, 0), axis=(1, 0, 0))
    return r


def robot_scara() -> Robot:
    r = Robot("scara_joint_types")
    r.link("world", mesh=False)
    r.link("column", 6.0, "cylinder", (0.08, 0.4), com=(0, 0, 0.2))
    r.joint("column_joint", "fixed", "world", "column", axis=(0, 0, 0))
    r.link("arm1", 2.5, "box", (0.3, 0.08, 0.06), com=(0.15, 0, 0))
    r.joint("shoulder", "revolute", "column", "arm1", (0, 0, 0.42), axis=(0, 0, 1),
            limit=(-2.5, 2.5), damping=0.2)
    r.link("arm2", 1.6, "box", (0.25, 0.07, 0.05), com=(0.12, 0.0, 0.0))
    r.joint("elbow", "continuous", "arm1", "arm2", (0.3, 0, 0.04), axis=(0, 0, 1))
    r.link("quill", 0.5, "cylinder", (0.015, 0.3), com=(0, 0, -0.05))
    r.joint("quill_z", "prismatic", "arm2", "quill", (0.25, 0, 0), axis=(0, 0, -1),
            limit=(0.0, 0.2), damping=5.0)
    r.link("tool_flange", 0.2, "cylinder", (0.03, 0.02))
    r.joint("tool_roll", "revolute", "quill", "tool_flange", (0, 0, -0.2), (0.05, -0.03, 0),
            axis=(0.1, 0, 0.995), limit=(-6.0, 6.0))
    r.link("slide_table", 1.2, "box", (0.3, 0.3, 0.02))
    r.joint("table_slide", "prismatic", "world", "slide_table", (0.4, 0, 0.1), (0, 0, 0.3),
            axis=(0.6, 0.8, 0), limit=(-0.1, 0.1))
    return r


def robot_industrial6() -> Robot:
    """ROS-Industrial layout: massless base_link and ``base`` frame, the inertia in
    ``base_link_inertia``, massless ``flange`` and ``tool0``."""
    r = Robot("industrial6")
    r.link("world", mesh=False)
    r.link("base_link", mesh=False)
    r.joint("world_joint", "fixed", "world", "base_link", axis=(0, 0, 0))
    r.link("base_link_inertia", 4.0, "cylinder", (0.08, 0.1), com=(0, 0, 0.05))
    r.joint("base_link-base_link_inertia", "fixed", "base_link", "base_link_inertia",
            rpy=(0, 0, pi), axis=(0, 0, 0))
    r.link("base", mesh=False)
    r.joint("base_link-base_fixed_joint", "fixed", "base_link", "base", rpy=(0, 0, pi))
    spec = [("shoulder_pan_joint", "base_link_inertia", "shoulder_link", (0, 0, 0.16),
             (0, 0, 0), 3.7, (0.06, 0.15)),
            ("shoulder_lift_joint", "shoulder_link", "upper_arm_link", (0, 0, 0),
             (pi / 2, 0, 0), 8.4, (0.06, 0.43)),
            ("elbow_joint", "upper_arm_link", "forearm_link", (-0.425, 0, 0), (0, 0, 0), 2.3,
             (0.05, 0.39)),
            ("wrist_1_joint", "forearm_link", "wrist_1_link", (-0.39, 0, 0.13), (0, 0, 0), 1.2,
             (0.04, 0.12)),
            ("wrist_2_joint", "wrist_1_link", "wrist_2_link", (0, -0.1, 0), (pi / 2, 0, 0), 1.2,
             (0.04, 0.12)),
            ("wrist_3_joint", "wrist_2_link", "wrist_3_link", (0, 0.1, 0), (pi / 2, pi, pi),
             0.25, (0.04, 0.03))]
    for jn, parent, child, xyz, rpy, m, dims in spec:
        com = (-dims[1] / 2, 0, 0.02) if child in ("upper_arm_link", "forearm_link") \
            else (0, 0.005, dims[1] / 3)
        r.link(child, m, "cylinder", dims, com=com,
               rpy=(0, pi / 2, 0) if child in ("upper_arm_link", "forearm_link") else (0, 0, 0))
        r.joint(jn, "revolute", parent, child, xyz, rpy, (0, 0, 1), limit=(-6.28, 6.28),
                damping=0.0)
    r.link("flange", mesh=False)
    r.joint("wrist_3-flange", "fixed", "wrist_3_link", "flange", (0, 0, 0.1),
            (0, -pi / 2, -pi / 2), axis=(0, 0, 0))
    r.link("tool0", mesh=False)
    r.joint("flange-tool0", "fixed", "flange", "tool0", rpy=(pi / 2, 0, pi / 2), axis=(0, 0, 0))
    return r


ROBOTS = [robot_arm7, robot_gripper, robot_hand, robot_quadruped, robot_humanoid,
          robot_mobile_manipulator, robot_planar_base, robot_floating_crate, robot_pan_tilt,
          robot_massless_chain, robot_universal_wrist, robot_point_mass, robot_coaxial,
          robot_single, robot_leaf, robot_scara, robot_industrial6]


def main() -> None:
    for make in ROBOTS:
        r = make()
        (HERE / f"{r.name}.urdf").write_text(r.text())
    (HERE / "empty_robot.urdf").write_text(
        '<?xml version="1.0"?>\n<!-- written for tests/dynamics/test_urdf_corpus.py -->\n'
        '<robot name="empty_robot">\n</robot>\n')


if __name__ == "__main__":
    main()
