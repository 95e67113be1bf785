from instancetype_webhook.sources.catalog import load_catalog
from instancetype_webhook.sources.compact import compact


def test_compact_keeps_the_data_and_drops_managed_fields():
    obj = {"kind": "VirtualMachineInstancetype",
           "metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}], "labels": {"x": "y"}},
           "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}, "annotations": {"k": "v" * 200}}}
    small = compact(obj)
    assert "managedFields" not in small["metadata"]
    assert "managedFields" in obj["metadata"]  # the input is not changed
    del obj["metadata"]["managedFields"]
    assert small == obj


def test_equal_keys_and_short_values_are_one_object():
    a = compact({"spec": {"memory": {"guest": "".join(["2", "Gi"])}}})
    b = compact({"spec": {"memory": {"guest": "".join(["2", "G", "i"])}}})
    assert a["spec"]["memory"]["guest"] is b["spec"]["memory"]["guest"]
    key_a = next(iter(a["spec"]))
    key_b = next(iter(b["spec"]))
    assert key_a is key_b


def test_catalogue_objects_are_compacted():
    src = load_catalog()
    one, other = (src.get("VirtualMachineClusterInstancetype", "u1.small"),
                  src.get("VirtualMachineClusterInstancetype", "u1.medium"))
    assert next(iter(one["spec"])) is next(iter(other["spec"]))
