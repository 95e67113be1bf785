"""Deep copies of JSON data (instancetype_webhook.kubevirt.jsondata)."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.jsondata import clone, clone_tree

DOC = {"a": [1, {"b": None, "c": [True, 2.5, "x"]}], "d": {}, "e": [], "f": "s"}


@pytest.mark.parametrize("copy", [clone, clone_tree])
def test_a_copy_is_equal_and_shares_no_container(copy):
    out = copy(DOC)
    assert out == DOC
    assert out is not DOC and out["a"] is not DOC["a"] and out["a"][1] is not DOC["a"][1]
    assert out["d"] is not DOC["d"] and out["e"] is not DOC["e"]
    out["a"][1]["c"].append("new")
    assert DOC["a"][1]["c"] == [True, 2.5, "x"]


def test_clone_returns_scalars_as_they_are():
    marker = object()
    assert clone(marker) is marker and clone("s") == "s" and clone(None) is None


def test_clone_tree_falls_back_for_what_orjson_cannot_encode():
    marker = object()
    tree = {"k": [marker, {"n": 1}], 1: "int key"}  # neither an object nor a non-string key is orjson's
    out = clone_tree(tree)
    assert out == tree and out["k"][0] is marker and out["k"] is not tree["k"]
