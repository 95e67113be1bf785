"""Kubernetes resource quantities (``"2Gi"``, ``"500m"``, ``"1.5"``) as exact numbers."""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Final

from instancetype_webhook.domxml.errors import DomainError

_BINARY: Final = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: Final = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
                   "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12),
                   "P": Decimal(10**15), "E": Decimal(10**18)}
_PATTERN: Final = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def parse_quantity(value: object) -> Decimal:
    """The exact value of a quantity (an int, float or Kubernetes quantity string)."""
    if isinstance(value, bool):
        raise DomainError(f"invalid quantity {value!r}")
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    match = _PATTERN.match(str(value).strip())
    if not match:
        raise DomainError(f"invalid quantity {value!r}")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        base = Decimal(number)
    except InvalidOperation as exc:
        raise DomainError(f"invalid quantity {value!r}") from exc
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    if suffix[:1] in ("e", "E") and len(suffix) > 1:  # an exponent; a lone "E" is exa (10^18)
        return base * (Decimal(10) ** int(suffix[1:]))
    return base * _DECIMAL[suffix]


def quantity_value(value: object) -> int:
    """Kubernetes ``Quantity.Value()``: the value rounded up to an integer."""
    return math.ceil(parse_quantity(value))


def quantity_bytes(value: object) -> int:
    """Bytes as the converter writes them: fractional byte counts are floored."""
    return math.floor(parse_quantity(value))
