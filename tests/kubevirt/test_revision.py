"""Decoding a ControllerRevision's stored object: upstream's compatibility package, its Go type names and
apimachinery's decode errors."""
import pytest

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.revision import SCHEME_NAME, go_type_name, stored_spec

INSTANCETYPES = ("VirtualMachineInstancetype", "VirtualMachineClusterInstancetype")
PREFERENCES = ("VirtualMachinePreference", "VirtualMachineClusterPreference")
V1BETA1 = "instancetype.kubevirt.io/v1beta1"


def revision(data, present=True):
    rev = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"}}
    if present:
        rev["data"] = data
    return rev


def error_of(rev, kinds=INSTANCETYPES):
    with pytest.raises(ExpandError) as info:
        stored_spec(rev, kinds)
    assert info.value.kind == "badRequest"
    return info.value.message


def test_both_v1beta1_kinds_of_the_family_give_their_spec():
    spec = {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}
    for kind in INSTANCETYPES:
        assert stored_spec(revision({"apiVersion": V1BETA1, "kind": kind, "spec": spec}), INSTANCETYPES) == spec
    assert stored_spec(revision({"apiVersion": V1BETA1, "kind": "VirtualMachinePreference"}), PREFERENCES) == {}


@pytest.mark.parametrize(
    "data,kinds,message",
    [
        ({"apiVersion": V1BETA1, "kind": "VirtualMachineClusterInstancetype", "spec": {}}, PREFERENCES,
         "unexpected type in ControllerRevision: *v1beta1.VirtualMachineClusterInstancetype"),
        ({"apiVersion": V1BETA1, "kind": "VirtualMachinePreference", "spec": {}}, INSTANCETYPES,
         "unexpected type in ControllerRevision: *v1beta1.VirtualMachinePreference"),
        ({"apiVersion": V1BETA1, "kind": "VirtualMachineInstancetypeList"}, INSTANCETYPES,
         "unexpected type in ControllerRevision: *v1beta1.VirtualMachineInstancetypeList"),
        ({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "spec": {}}, INSTANCETYPES,
         "unexpected type in ControllerRevision: *v1.VirtualMachine"),
        ({"apiVersion": "v1", "kind": "Status"}, INSTANCETYPES, "unexpected type in ControllerRevision: *v1.Status"),
        (None, INSTANCETYPES, "unexpected type in ControllerRevision: <nil>"),
        ({"apiVersion": "instancetype.kubevirt.io/v1alpha2", "kind": "VirtualMachineClusterPreference"}, PREFERENCES,
         'failed to decode object in ControllerRevision: no kind "VirtualMachineClusterPreference" is registered for '
         f'version "instancetype.kubevirt.io/v1alpha2" in scheme "{SCHEME_NAME}"'),
        ({"apiVersion": "instancetype.kubevirt.io/v1alpha1", "kind": "VirtualMachineInstancetype"}, INSTANCETYPES,
         'failed to decode object in ControllerRevision: no kind "VirtualMachineInstancetype" is registered for '
         f'version "instancetype.kubevirt.io/v1alpha1" in scheme "{SCHEME_NAME}"'),
        ({"apiVersion": "apps/v1", "kind": "ControllerRevision"}, INSTANCETYPES,
         'failed to decode object in ControllerRevision: no kind "ControllerRevision" is registered for version '
         f'"apps/v1" in scheme "{SCHEME_NAME}"'),
        ({"apiVersion": V1BETA1, "spec": {}}, INSTANCETYPES,
         "failed to decode object in ControllerRevision: Object 'Kind' is missing in "
         """'{"apiVersion":"instancetype.kubevirt.io/v1beta1","spec":{}}'"""),
        ({"kind": "VirtualMachineInstancetype"}, INSTANCETYPES,
         "failed to decode object in ControllerRevision: Object 'apiVersion' is missing in "
         """'{"kind":"VirtualMachineInstancetype"}'"""),
        ({"apiVersion": "a/b/c", "kind": "X"}, INSTANCETYPES,
         "failed to decode object in ControllerRevision: unexpected GroupVersion string: a/b/c"),
        ({"apiVersion": 1, "kind": "X"}, INSTANCETYPES,
         "failed to decode object in ControllerRevision: couldn't get version/kind; json parse error: json: cannot "
         "unmarshal number into Go struct field .apiVersion of type string"),
        ("text", INSTANCETYPES,
         "failed to decode object in ControllerRevision: couldn't get version/kind; json parse error: json: cannot "
         'unmarshal string into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
         'Kind string "json:\\"kind,omitempty\\"" }'),
    ],
)
def test_upstream_errors(data, kinds, message):
    assert error_of(revision(data), kinds) == message


def test_absent_data_is_nil():
    assert error_of(revision(None, present=False)) == "unexpected type in ControllerRevision: <nil>"


def test_go_type_names():
    assert (go_type_name("instancetype.kubevirt.io", "v1beta1", "VirtualMachinePreferenceList")
            == "*v1beta1.VirtualMachinePreferenceList")
    assert go_type_name("snapshot.kubevirt.io", "v1beta1", "VirtualMachineRestore") == "*v1beta1.VirtualMachineRestore"
    assert go_type_name("kubevirt.io", "v1", "WatchEvent") == "*v1.WatchEvent"
    assert go_type_name("kubevirt.io", "v1alpha3", "VirtualMachine") is None
    assert go_type_name("instancetype.kubevirt.io", "v1beta1", "Nope") is None
