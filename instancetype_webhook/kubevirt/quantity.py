"""Kubernetes `resource.Quantity`: parse, compare and print like k8s.io/apimachinery does.

A quantity is an exact rational value plus the *format* its suffix implied (BinarySI for Ki/Mi/...,
DecimalSI for k/M/m/... or no suffix, DecimalExponent for e-notation). Printing follows the
apimachinery canonical form, so `1.5Gi` prints as `1536Mi`, 1000 as `1k`, 0.1 as `100m`, and a
BinarySI value that is not a multiple of 1024 as a plain integer.

`overcommit_request` reproduces instance type memory overcommit exactly as upstream computes it:
`int64(float32(guestBytes) * (1 - float32(pct)/100))` in IEEE-754 single precision.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final

BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"
DECIMAL_EXPONENT: Final = "DecimalExponent"

_BINARY: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP: Final = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_BY_SHIFT: Final = {shift: suffix for suffix, shift in _BINARY.items()}
_PATTERN: Final = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")


class QuantityError(ValueError):
    """Text that is not a Kubernetes quantity."""


@dataclass(frozen=True, init=False)
class Quantity:
    value: Fraction
    format: str
    # the value's numerator and denominator as plain integers, read once: comparisons cross-multiply them
    # (Fraction's own comparison checks its operand against the numbers ABCs first, and its numerator and
    # denominator are properties: more than the rest of a memory check costs on the review path)
    numerator: int = field(repr=False, compare=False)
    denominator: int = field(repr=False, compare=False)

    def __init__(self, value: Fraction, format: str = DECIMAL_SI) -> None:  # noqa: A002 - the dataclass field
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "format", format)
        object.__setattr__(self, "numerator", value.numerator)
        object.__setattr__(self, "denominator", value.denominator)

    def __hash__(self) -> int:  # written out: the compiled build does not take the generated one
        return hash(self.value)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def parse(cls, raw: Any) -> Quantity:
        return _parse(raw if isinstance(raw, str) else _number_text(raw))

    @classmethod
    def of(cls, number: int, fmt: str = DECIMAL_SI) -> Quantity:
        return cls(Fraction(number), fmt)

    # -- reading ------------------------------------------------------------------------------
    def int_value(self) -> int:
        """Go's Quantity.Value(): the value rounded up to an integer."""
        return math.ceil(self.value)

    def is_zero(self) -> bool:
        return self.value == 0

    def __str__(self) -> str:
        return format_quantity(self.value, self.format)

    # -- comparison: cross-multiplied integers (denominators are positive) ----------------------
    def _cross(self, other: Quantity) -> tuple[int, int]:
        return self.numerator * other.denominator, other.numerator * self.denominator

    def __lt__(self, other: Quantity) -> bool:
        mine, theirs = self._cross(other)
        return mine < theirs

    def __le__(self, other: Quantity) -> bool:
        mine, theirs = self._cross(other)
        return mine <= theirs

    def __gt__(self, other: Quantity) -> bool:
        mine, theirs = self._cross(other)
        return mine > theirs

    def __ge__(self, other: Quantity) -> bool:
        mine, theirs = self._cross(other)
        return mine >= theirs

    def equals(self, other: Quantity) -> bool:
        mine, theirs = self._cross(other)
        return mine == theirs


def _number_text(raw: Any) -> str:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise QuantityError("quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {raw!r}")
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return repr(raw)


@lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    match = _PATTERN.match(text.strip())
    if not match:
        raise QuantityError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    number, suffix = match.group(1), match.group(2) or ""
    value = Fraction(number)
    if suffix in _BINARY:
        return Quantity(value * (1 << _BINARY[suffix]), BINARY_SI)
    if suffix in _DECIMAL:
        return Quantity(value * Fraction(10) ** _DECIMAL[suffix], DECIMAL_SI)
    return Quantity(value * Fraction(10) ** int(suffix[1:]), DECIMAL_EXPONENT)


def parse(raw: Any) -> Quantity:
    """A Quantity from a string or a JSON number; raises QuantityError."""
    return Quantity.parse(raw)


def canonical(raw: Any) -> str:
    """The canonical string of a quantity given as text or number."""
    return _canonical_text(raw) if isinstance(raw, str) else str(parse(raw))


@lru_cache(maxsize=4096)
def _canonical_text(raw: str) -> str:
    return str(_parse(raw))


def same_value(a: Any, b: Any) -> bool:
    """Whether two quantities (text or numbers) have the same value."""
    try:
        return bool(parse(a).value == parse(b).value)
    except QuantityError:
        return bool(a == b)


def format_quantity(value: Fraction, fmt: str) -> str:
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        return _format_binary(int(value))
    return _format_decimal(value, fmt)


def _format_binary(number: int) -> str:
    sign = "-" if number < 0 else ""
    magnitude = abs(number)
    shift = 0
    while shift < 60 and magnitude and magnitude % 1024 == 0:
        magnitude //= 1024
        shift += 10
    return f"{sign}{magnitude}{_BINARY_BY_SHIFT.get(shift, '')}"


def _format_decimal(value: Fraction, fmt: str) -> str:
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    # Round up to nano precision, as apimachinery does for sub-nano fractions.
    nanos = math.ceil(magnitude * 10**9)
    if nanos == 0:
        return "0"
    exponent = -9
    while nanos % 1000 == 0 and exponent < 18:
        nanos //= 1000
        exponent += 3
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{nanos}" if exponent == 0 else f"{sign}{nanos}e{exponent}"
    return f"{sign}{nanos}{_DECIMAL_BY_EXP[exponent]}"


def _f32(x: float) -> float:
    """Round a float to IEEE-754 single precision (round-to-nearest-even)."""
    single: float = struct.unpack("f", struct.pack("f", x))[0]
    return single


def overcommit_request(guest: Quantity, percent: int) -> Quantity:
    """The pod memory request for `guest` memory at `percent` overcommit, in upstream's float32 maths."""
    factor = _f32(1 - _f32(_f32(float(percent)) / 100))
    product = _f32(_f32(float(guest.int_value())) * factor)
    return Quantity(Fraction(int(product)), guest.format)
