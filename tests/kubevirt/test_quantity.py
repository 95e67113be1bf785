"""Kubernetes quantities: parsing, canonical printing, and upstream's float32 overcommit maths."""
from __future__ import annotations

from fractions import Fraction

import pytest

from instancetype_webhook.kubevirt.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    Quantity,
    QuantityError,
    canonical,
    overcommit_request,
    parse,
    same_value,
)


@pytest.mark.parametrize("text, value, fmt", [
    ("4Gi", 4 * 2**30, BINARY_SI),
    ("1.5Gi", 3 * 2**29, BINARY_SI),
    ("100m", Fraction(1, 10), DECIMAL_SI),
    ("1G", 10**9, DECIMAL_SI),
    ("1e3", 1000, DECIMAL_EXPONENT),
    ("3865470464", 3865470464, DECIMAL_SI),
    (".5", Fraction(1, 2), DECIMAL_SI),
    (4, 4, DECIMAL_SI),
])
def test_parse(text, value, fmt):
    q = parse(text)
    assert q.value == value and q.format == fmt


@pytest.mark.parametrize("text, printed", [
    ("1.5Gi", "1536Mi"), ("1024Mi", "1Gi"), ("4Gi", "4Gi"), ("1000", "1k"), ("1500", "1500"),
    ("0.1", "100m"), ("1e3", "1e3"), ("0", "0"), ("512", "512"), ("1025Ki", "1025Ki"),
    ("1536", "1536"),  # decimal stays decimal
])
def test_canonical_strings(text, printed):
    assert canonical(text) == printed


@pytest.mark.parametrize("bad", ["", "Gi", "4GB", "1.2.3", "abc", True, None, [1]])
def test_malformed_quantities_raise(bad):
    with pytest.raises(QuantityError):
        parse(bad)


@pytest.mark.parametrize("guest, percent, expected", [
    ("1Gi", 10, "966367616"),        # float64 maths would give 966367641
    ("4Gi", 10, "3865470464"),       # not 3865470566
    ("4Gi", 50, "2Gi"),
    ("2Gi", 25, "1536Mi"),
    ("3Gi", 33, "2158220800"),
    ("1G", 10, "900M"),
    ("512Mi", 10, "483183808"),
    ("4Gi", 100, "0"),
])
def test_overcommit_request_uses_float32(guest, percent, expected):
    assert str(overcommit_request(parse(guest), percent)) == expected


def test_comparison_and_value():
    assert parse("1Gi") > parse("1G")
    assert parse("1536Mi").equals(parse("1.5Gi"))
    assert parse("500m").int_value() == 1  # Go's Value() rounds up
    assert same_value("4Gi", "4294967296") and not same_value("4Gi", "4G")
    assert str(Quantity.of(2048, BINARY_SI)) == "2Ki"


@pytest.mark.parametrize("small, large", [
    ("500m", "1"), ("0.5", "501m"), ("1.5Gi", "1537Mi"), ("999999999n", "1"), ("-1", "0"), ("1e3", "1001"),
    ("1k", "1Ki"), ("1.25", "1.5"),
])
def test_order_is_exact_with_fractions_and_mixed_suffixes(small, large):
    a, b = parse(small), parse(large)
    assert a < b and a <= b and b > a and b >= a
    assert not (b < a) and not (a > b) and not a.equals(b)
    assert parse(small) <= a and parse(small) >= a and a.equals(parse(small))


def test_equal_values_of_different_formats_are_ordered_equal_and_hash_alike():
    a, b = parse("1.5Gi"), parse("1610612736")
    assert a.equals(b) and not a < b and not b < a and a <= b and a >= b
    assert hash(parse("500m")) == hash(parse("0.5"))
