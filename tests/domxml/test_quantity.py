"""Kubernetes quantities as exact numbers (domxml/quantity.py): suffixes, exponents, rounding up and flooring."""
from __future__ import annotations

from decimal import Decimal

import pytest

from instancetype_webhook.domxml import DomainError
from instancetype_webhook.domxml.quantity import parse_quantity, quantity_bytes, quantity_value


@pytest.mark.parametrize("text, expected", [
    ("2Gi", Decimal(2 * 2**30)),
    ("1Ki", Decimal(1024)),
    ("1.5Mi", Decimal(3 * 2**19)),
    ("500m", Decimal("0.5")),
    ("1.5", Decimal("1.5")),
    ("3k", Decimal(3000)),
    ("2M", Decimal(2_000_000)),
    ("1e3", Decimal(1000)),
    ("25E-1", Decimal("2.5")),
    ("2T", Decimal(2 * 10**12)),
    ("-1Ki", Decimal(-1024)),
    (" 2Gi ", Decimal(2 * 2**30)),
])
def test_parse_quantity_suffixes(text, expected):
    assert parse_quantity(text) == expected


def test_parse_quantity_numbers_are_exact():
    assert parse_quantity(3) == Decimal(3)
    assert parse_quantity(0.1) == Decimal("0.1")  # through str(): no binary float residue


@pytest.mark.parametrize("bad", ["lots", "2Gib", "1..2", "", "Gi", True, False])
def test_parse_quantity_rejects_what_is_not_a_quantity(bad):
    with pytest.raises(DomainError, match="invalid quantity"):
        parse_quantity(bad)


def test_quantity_value_rounds_up():
    assert quantity_value("500m") == 1
    assert quantity_value("1.2") == 2
    assert quantity_value("2") == 2
    assert quantity_value("-500m") == 0
    assert quantity_value(4) == 4


def test_quantity_bytes_floors():
    assert quantity_bytes("1.9") == 1
    assert quantity_bytes("0.5Ki") == 512
    assert quantity_bytes("1Gi") == 2**30
    assert quantity_bytes("500m") == 0


def test_a_lone_e_is_the_exa_suffix_and_e_with_digits_an_exponent():
    assert parse_quantity("1E") == Decimal(10**18)
    assert parse_quantity("2e3") == Decimal(2000)
    assert parse_quantity("1E2") == Decimal(100)
