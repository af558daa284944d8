"""A parameter field's meaning is the docstring under it: read back for the README tables and the
ROS parameter descriptions (core.field_docs, config.flat_fields)."""
from __future__ import annotations

from dataclasses import dataclass, make_dataclass

from vehicle_sim.core.config import flat_fields, spec
from vehicle_sim.core.field_docs import field_docs
from vehicle_sim.docs import NODE_PARAMS


@dataclass(frozen=True)
class _Inner:
    depth_m: float = spec(1.0, unit="m", ge=0.0, le=10.0)
    """how deep, in
    two lines"""


@dataclass(frozen=True)
class _Outer:
    """The class docstring belongs to no field."""

    width_m: float = spec(2.0, unit="m", ge=0.0, le=10.0)
    """how wide"""
    bare: int = spec(3)
    given: str = spec("x", doc="from spec")
    """from the docstring"""
    inner: _Inner = spec(_Inner())
    x = 1
    """a docstring under a plain attribute (no annotation) is not a field's"""


@dataclass(frozen=True)
class _Derived(_Outer):
    width_m: float = spec(4.0, unit="m", ge=0.0, le=10.0)
    """how wide, here"""


def test_the_string_under_a_field_is_its_doc_with_white_space_folded():
    docs = field_docs(_Outer)
    assert docs["width_m"] == "how wide"
    assert "bare" not in docs and "x" not in docs
    assert field_docs(_Inner) == {"depth_m": "how deep, in two lines"}


def test_a_subclass_docstring_wins_and_the_base_ones_stay():
    docs = field_docs(_Derived)
    assert docs["width_m"] == "how wide, here"
    assert docs["given"] == "from the docstring"


def test_a_class_without_source_has_no_docstrings():
    built = make_dataclass("Built", [("a", float, spec(1.0, doc="kept"))], frozen=True)
    assert field_docs(built) == {}
    assert flat_fields(built)[0][3]["doc"] == "kept"


def test_flat_fields_carry_the_docstring_and_prefer_the_spec_doc():
    meta = {name: m["doc"] for name, _, _, m in flat_fields(_Outer)}
    assert meta == {"width_m": "how wide", "bare": "", "given": "from spec",
                    "inner.depth_m": "how deep, in two lines"}


def test_every_parameter_a_node_declares_says_what_it_means():
    undocumented = [f"{node}: {name}" for node, cls in NODE_PARAMS.items()
                    for name, _, _, meta in flat_fields(cls) if not meta["doc"].strip()]
    assert undocumented == []
