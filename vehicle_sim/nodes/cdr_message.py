"""A ROS message as CDR bytes with its padding zeroed: the same bytes for the same message.

rmw_fastrtps (what rclpy.serialization.serialize_message calls) leaves the alignment padding of
its buffer as it found the memory, so one message serializes to different bytes from run to run;
the engine's recording (edge_recording) must repeat byte for byte with its seed. Layout as
rmw_fastrtps writes it: encapsulation CDR little-endian (00 01 00 00), then the fields in order,
each primitive aligned to its size (at most 8) from the end of the encapsulation, strings as a
uint32 length with the terminating NUL, sequences as a uint32 count and their elements, fixed
arrays as their elements. test/ros/test_cdr_message.py pins it to serialize_message.
"""
from __future__ import annotations

import struct

from rosidl_parser import definition as idl

from vehicle_sim.nodes.state_cdr import ENCAPSULATION

_CODES = {"boolean": "?", "octet": "B", "char": "B", "uint8": "B", "int8": "b", "int16": "h",
          "uint16": "H", "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q", "float": "f",
          "double": "d"}


def cdr_bytes(msg) -> bytes:
    """The CDR serialization of ``msg`` (a generated rclpy message), padding zeroed."""
    out = bytearray(ENCAPSULATION)
    _message(out, msg)
    return bytes(out)


def _align(out: bytearray, size: int) -> None:
    out += bytes(-(len(out) - len(ENCAPSULATION)) % size)


def _message(out: bytearray, msg) -> None:
    if not msg.SLOT_TYPES:  # rosidl's hidden member, whose bytes rmw pads its own way
        raise TypeError(f"no CDR for the empty {type(msg).__name__} (no vehicle_sim edge has one)")
    for name, kind in zip(msg.get_fields_and_field_types(), msg.SLOT_TYPES, strict=True):
        _value(out, kind, getattr(msg, name))


def _code(kind: idl.BasicType) -> str:
    if kind.typename not in _CODES:
        raise TypeError(f"no CDR for {kind.typename} (no vehicle_sim edge has one)")
    return _CODES[kind.typename]


def _number(kind: idl.BasicType, value):
    if kind.typename == "char" and isinstance(value, str):
        return ord(value)
    return value[0] if isinstance(value, bytes) else value  # octet: a bytes of length 1


def _value(out: bytearray, kind, value) -> None:
    if isinstance(kind, idl.BasicType):
        code = _code(kind)
        _align(out, struct.calcsize(code))
        out += struct.pack(f"<{code}", _number(kind, value))
    elif isinstance(kind, idl.AbstractWString):
        raise TypeError("wide strings are not written (no vehicle_sim edge has one)")
    elif isinstance(kind, idl.AbstractString):
        data = value.encode() + b"\x00"
        _align(out, 4)
        out += struct.pack("<I", len(data)) + data
    elif isinstance(kind, idl.NamespacedType):
        _message(out, value)
    elif isinstance(kind, idl.Array):
        _items(out, kind.value_type, value)
    elif isinstance(kind, idl.AbstractSequence):
        _align(out, 4)
        out += struct.pack("<I", len(value))
        _items(out, kind.value_type, value)
    else:
        raise TypeError(f"no CDR for {kind!r}")


def _items(out: bytearray, kind, values) -> None:
    if isinstance(kind, idl.BasicType) and len(values):  # one aligned run of numbers
        code = _code(kind)
        _align(out, struct.calcsize(code))
        out += struct.pack(f"<{len(values)}{code}", *(_number(kind, v) for v in values))
        return
    for value in values:
        _value(out, kind, value)
