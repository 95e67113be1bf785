"""Following a volume to the labelled object (instancetype_webhook.kubevirt.infer.volume): every chain, namespace and
error."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.infer.errors import InferenceError
from instancetype_webhook.kubevirt.infer.volume import INSTANCETYPE_LABELS, PREFERENCE_LABELS, Origin, VolumeFollower
from instancetype_webhook.kubevirt.source import InMemorySource, KindNotServed
from tests.kit.builders import NO_DOMAIN
from tests.kit.builders import vm as build_vm

NS = "vms"
IT = "instancetype.kubevirt.io/default-instancetype"
IT_KIND = "instancetype.kubevirt.io/default-instancetype-kind"
PREF = "instancetype.kubevirt.io/default-preference"


def obj(kind: str, name: str, namespace: str = NS, labels: dict | None = None, spec: dict | None = None) -> dict:
    meta = {"name": name, "namespace": namespace, **({"labels": labels} if labels is not None else {})}
    return {"kind": kind, "metadata": meta, **({"spec": spec} if spec is not None else {})}


def pvc(name: str, namespace: str = NS, labels: dict | None = None) -> dict:
    return obj("PersistentVolumeClaim", name, namespace, labels)


def vm(volume: dict, templates: list | None = None) -> dict:
    return build_vm("v", NS, typed=False, run_strategy=None, domain=NO_DOMAIN,
                    volumes=[{"name": "other", "containerDisk": {}}, {"name": "root", **volume}],
                    spec=None if templates is None else {"dataVolumeTemplates": templates})


def follow(the_vm: dict, objects: list[dict], labels=INSTANCETYPE_LABELS, volume: str = "root"):
    return VolumeFollower(the_vm, NS, InMemorySource(objects, default_namespace=NS), labels).defaults(volume)


LABELS = {IT: "it-a", PREF: "pref-a"}
DS_REF = {"sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "images"}}

# (id, volume, dataVolumeTemplates, objects, expected (name, kind, origin kind/ns/name))
FOUND = [
    ("pvc", {"persistentVolumeClaim": {"claimName": "disk"}}, None, [pvc("disk", labels=LABELS)],
     ("it-a", "", ("PersistentVolumeClaim", NS, "disk"))),
    ("pvc kind label copied as is", {"persistentVolumeClaim": {"claimName": "disk"}}, None,
     [pvc("disk", labels={IT: "x", IT_KIND: "virtualmachineinstancetypes"})],
     ("x", "virtualmachineinstancetypes", ("PersistentVolumeClaim", NS, "disk"))),
    ("empty name label still counts", {"persistentVolumeClaim": {"claimName": "disk"}}, None,
     [pvc("disk", labels={IT: ""})], ("", "", ("PersistentVolumeClaim", NS, "disk"))),
    ("pvc before dataVolume in one volume",
     {"persistentVolumeClaim": {"claimName": "disk"}, "dataVolume": {"name": "dv"}},
     None, [pvc("disk", labels=LABELS)], ("it-a", "", ("PersistentVolumeClaim", NS, "disk"))),
    ("live datavolume labels", {"dataVolume": {"name": "dv"}}, None,
     [obj("DataVolume", "dv", labels=LABELS, spec={"source": {"pvc": {"name": "x", "namespace": NS}}})],
     ("it-a", "", ("DataVolume", NS, "dv"))),
    ("live datavolume without labels -> its source.pvc", {"dataVolume": {"name": "dv"}}, None,
     [obj("DataVolume", "dv", spec={"source": {"pvc": {"name": "gold", "namespace": "images"}}}),
      pvc("gold", "images", LABELS)], ("it-a", "", ("PersistentVolumeClaim", "images", "gold"))),
    ("garbage-collected datavolume -> pvc of the same name", {"dataVolume": {"name": "dv"}}, None,
     [pvc("dv", labels=LABELS)], ("it-a", "", ("PersistentVolumeClaim", NS, "dv"))),
    ("template sourceRef -> datasource labels", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", LABELS)], ("it-a", "", ("DataSource", "images", "fedora"))),
    ("template wins over the live datavolume", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", LABELS), obj("DataVolume", "dv", labels={IT: "live"})],
     ("it-a", "", ("DataSource", "images", "fedora"))),
    ("template labels are not read", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv", "labels": {IT: "tmpl"}}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", LABELS)], ("it-a", "", ("DataSource", "images", "fedora"))),
    ("sourceRef without namespace: the VM's", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora"}}}],
     [obj("DataSource", "fedora", NS, LABELS)], ("it-a", "", ("DataSource", NS, "fedora"))),
    ("datasource without labels -> its pvc", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", spec={"source": {"pvc": {"name": "gold", "namespace": "images"}}}),
      pvc("gold", "images", LABELS)], ("it-a", "", ("PersistentVolumeClaim", "images", "gold"))),
    ("datasource without labels -> its snapshot", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", spec={"source": {"snapshot": {"name": "snap", "namespace": "images"}}}),
      obj("VolumeSnapshot", "snap", "images", LABELS)], ("it-a", "", ("VolumeSnapshot", "images", "snap"))),
    ("template source.snapshot", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"source": {"snapshot": {"name": "snap", "namespace": "images"}}}}],
     [obj("VolumeSnapshot", "snap", "images", LABELS)], ("it-a", "", ("VolumeSnapshot", "images", "snap"))),
    ("http source falls through to sourceRef", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"source": {"http": {"url": "u"}}, **DS_REF}}],
     [obj("DataSource", "fedora", "images", LABELS)], ("it-a", "", ("DataSource", "images", "fedora"))),
]


@pytest.mark.parametrize("volume,templates,objects,want", [f[1:] for f in FOUND], ids=[f[0] for f in FOUND])
def test_found(volume, templates, objects, want):
    found = follow(vm(volume, templates), objects)
    name, kind, origin = want
    assert (found.name, found.kind, found.origin) == (name, kind, Origin(*origin))


# (id, volume, templates, objects, message, ignorable)
FAILS = [
    ("missing volume", {"persistentVolumeClaim": {"claimName": "disk"}}, None, [], None, False),
    ("unsupported volume type", {"containerDisk": {"image": "x"}}, None, [],
     "unable to infer defaults from volume root as type is not supported", True),
    ("missing pvc", {"persistentVolumeClaim": {"claimName": "disk"}}, None, [],
     'persistentvolumeclaims "disk" not found', False),
    ("pvc in another namespace is not the VM's", {"persistentVolumeClaim": {"claimName": "disk"}}, None,
     [pvc("disk", "elsewhere", LABELS)], 'persistentvolumeclaims "disk" not found', False),
    ("missing name label (kind label alone)", {"persistentVolumeClaim": {"claimName": "disk"}}, None,
     [pvc("disk", labels={IT_KIND: "VirtualMachineInstancetype"})],
     "unable to find required instancetype.kubevirt.io/default-instancetype label on the volume", True),
    ("neither datavolume nor pvc", {"dataVolume": {"name": "dv"}}, None, [], 'persistentvolumeclaims "dv" not found',
     False),
    ("live datavolume with http source", {"dataVolume": {"name": "dv"}}, None,
     [obj("DataVolume", "dv", spec={"source": {"http": {"url": "u"}}})],
     "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported", True),
    ("template without spec", {"dataVolume": {"name": "dv"}}, [{"metadata": {"name": "dv"}}], [],
     "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported", True),
    ("sourceRef of another kind", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"sourceRef": {"kind": "PersistentVolumeClaim", "name": "x"}}}], [],
     "unable to infer defaults from DataVolumeSourceRef as Kind PersistentVolumeClaim is not supported", True),
    ("missing datasource", {"dataVolume": {"name": "dv"}}, [{"metadata": {"name": "dv"}, "spec": DS_REF}], [],
     'datasources.cdi.kubevirt.io "fedora" not found', False),
    ("datasource without labels or source", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", spec={"source": {}})],
     "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC or DataVolumeSourceSnapshot",
     True),
    ("source.pvc without namespace is looked up in the empty namespace", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"source": {"pvc": {"name": "gold"}}}}], [pvc("gold", labels=LABELS)],
     'persistentvolumeclaims "gold" not found', False),
    ("sourceRef namespace empty string", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": ""}}}],
     [obj("DataSource", "fedora", NS, LABELS)], 'datasources.cdi.kubevirt.io "fedora" not found', False),
    ("missing snapshot", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": {"source": {"snapshot": {"name": "snap", "namespace": NS}}}}], [],
     'volumesnapshots.snapshot.storage.k8s.io "snap" not found', False),
    ("labelled pvc behind an unlabelled datasource, missing label", {"dataVolume": {"name": "dv"}},
     [{"metadata": {"name": "dv"}, "spec": DS_REF}],
     [obj("DataSource", "fedora", "images", spec={"source": {"pvc": {"name": "gold", "namespace": "images"}}}),
      pvc("gold", "images", {PREF: "only-pref"})],
     "unable to find required instancetype.kubevirt.io/default-instancetype label on the volume", True),
]


@pytest.mark.parametrize("volume,templates,objects,message,is_ignorable", [f[1:] for f in FAILS],
                         ids=[f[0] for f in FAILS])
def test_fails(volume, templates, objects, message, is_ignorable):
    the_vm = vm(volume, templates)
    with pytest.raises(InferenceError) as info:
        follow(the_vm, objects, volume="boot" if message is None else "root")
    assert info.value.message == (message or "unable to find volume boot to infer defaults")
    assert info.value.ignorable is is_ignorable


def test_preference_labels():
    found = follow(vm({"persistentVolumeClaim": {"claimName": "disk"}}),
                   [pvc("disk",
                        labels={PREF: "fedora",
                                "instancetype.kubevirt.io/default-preference-kind": "VirtualMachinePreference"})],
                   labels=PREFERENCE_LABELS)
    assert (found.name, found.kind) == ("fedora", "VirtualMachinePreference")


class NoCDI(InMemorySource):
    def get(self, kind, name, namespace=None):
        if kind in ("DataVolume", "DataSource"):
            raise KindNotServed("the cdi.kubevirt.io/v1beta1 API is not installed")
        return super().get(kind, name, namespace)


def test_api_not_installed_is_a_clear_error_never_ignorable():
    the_vm = vm({"dataVolume": {"name": "dv"}}, [{"metadata": {"name": "dv"}, "spec": DS_REF}])
    with pytest.raises(InferenceError) as info:
        VolumeFollower(the_vm, NS, NoCDI(), INSTANCETYPE_LABELS).defaults("root")
    assert info.value.message == ("unable to read DataSource images/fedora to infer defaults: "
                                  "the cdi.kubevirt.io/v1beta1 API is not installed")
    assert not info.value.ignorable


def test_datavolume_without_cdi_falls_back_to_the_pvc_like_upstream():
    found = VolumeFollower(vm({"dataVolume": {"name": "dv"}}), NS, NoCDI([pvc("dv", labels=LABELS)]),
                           INSTANCETYPE_LABELS).defaults("root")
    assert found.origin == Origin("PersistentVolumeClaim", NS, "dv")


@pytest.mark.parametrize("bad", [None, "x", 3, [], {"volumes": "nope"}])
def test_malformed_template_is_a_missing_volume_not_a_crash(bad):
    the_vm = {"spec": {"template": {"spec": bad}}}
    with pytest.raises(InferenceError, match="unable to find volume root to infer defaults"):
        VolumeFollower(the_vm, NS, InMemorySource(), INSTANCETYPE_LABELS).defaults("root")
