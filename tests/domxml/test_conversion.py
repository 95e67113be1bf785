"""What the builders share (domxml/conversion.py): the values Conversion derives from the VMI and context."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import LauncherContext, render_domain
from instancetype_webhook.domxml.conversion import Conversion
from tests.kit.domxml import UID, conversion, make_vmi


def test_vmi_without_any_memory_converts_as_zero_bytes():
    vmi = make_vmi({"memory": {}})
    assert '<memory unit="b">0</memory>' in render_domain(vmi)


def raw(domain: dict | None = None, ctx: LauncherContext | None = None, **spec: object) -> Conversion:
    """A Conversion of the VMI as written (no defaults), so each property reads only what the test gives."""
    return conversion(make_vmi(domain, **spec), ctx, defaults=False)


def test_metadata_properties_and_their_fallbacks():
    conv = raw(annotations={"a": "b"})
    assert (conv.name, conv.namespace, conv.uid, conv.annotations) == ("vm1", "ns1", UID, {"a": "b"})
    bare = Conversion(vmi={"spec": {"domain": {}}}, ctx=LauncherContext())
    assert (bare.name, bare.namespace, bare.uid, bare.annotations) == ("", "default", "", {})
    assert (bare.devices, bare.cpu, bare.memory, bare.features, bare.firmware) == ({}, {}, {}, {}, {})


@pytest.mark.parametrize("domain, expected", [
    ({"cpu": {"sockets": 2, "cores": 3, "threads": 2}}, (2, 3, 2)),
    ({"cpu": {"cores": 4}}, (1, 4, 1)),  # the missing parts count as 1
    ({"resources": {"limits": {"cpu": "3"}, "requests": {"cpu": "5"}}}, (3, 1, 1)),  # limits before requests
    ({"resources": {"requests": {"cpu": "1500m"}}}, (2, 1, 1)),  # rounded up
    ({"resources": {"requests": {"cpu": "0"}}}, (1, 1, 1)),  # at least one vCPU
    ({}, (1, 1, 1)),
])
def test_topology_from_the_cpu_else_the_cpu_resources(domain, expected):
    conv = raw(domain)
    assert conv.topology == expected
    assert conv.vcpus == expected[0] * expected[1] * expected[2]


def test_guest_memory_from_guest_else_limits_else_requests():
    assert raw({"memory": {"guest": "1Gi"}, "resources": {"limits": {"memory": "2Gi"}}}).guest_memory == 2**30
    assert raw({"memory": {}, "resources": {"limits": {"memory": "2Gi"},
                                            "requests": {"memory": "3Gi"}}}).guest_memory == 2 * 2**30
    assert raw({"memory": {}, "resources": {"requests": {"memory": "3Gi"}}}).guest_memory == 3 * 2**30
    assert raw({"memory": {}}).guest_memory == 0


def test_architecture_is_the_contexts_else_the_vmis_else_amd64():
    assert raw().architecture == "amd64" and raw().amd64
    assert raw(architecture="arm64").architecture == "arm64" and not raw(architecture="arm64").amd64
    assert raw(ctx=LauncherContext(architecture="s390x")).architecture == "s390x"
    assert raw(architecture="s390x").virtio_model == "virtio"
    assert raw().virtio_model == "virtio-non-transitional"
    assert raw({"devices": {"useVirtioTransitional": True}}).virtio_model == "virtio-transitional"


def test_dedicated_cpu_flags():
    assert not raw().dedicated and not raw().isolate_emulator and not raw().realtime
    assert not raw({"cpu": {"isolateEmulatorThread": True}}).isolate_emulator  # only with dedicated CPUs
    conv = raw({"cpu": {"dedicatedCpuPlacement": True, "isolateEmulatorThread": True, "realtime": {},
                        "numa": {"guestMappingPassthrough": {}}}})
    assert conv.dedicated and conv.isolate_emulator and conv.realtime and conv.numa_passthrough
    assert not raw({"cpu": {"numa": {}}}).numa_passthrough


def test_efi_and_secure_boot():
    assert raw().efi is None and not raw().secure_boot
    assert raw({"firmware": {"bootloader": {"efi": {}}}}).secure_boot  # secure boot unless turned off
    off = raw({"firmware": {"bootloader": {"efi": {"secureBoot": False}}}})
    assert off.efi == {"secureBoot": False} and not off.secure_boot
    assert raw({"firmware": {"bootloader": {"bios": {}}}}).efi is None


def test_sev_snp_and_secure_execution_turn_iommu_on():
    assert not raw().sev and not raw().iommu
    assert raw({"launchSecurity": {"sev": {}}}).sev and raw({"launchSecurity": {"snp": {}}}).iommu
    s390x = raw({"launchSecurity": {}}, architecture="s390x")
    assert s390x.secure_execution and not s390x.sev and s390x.iommu
    assert not raw({"launchSecurity": {}}).secure_execution and not raw({"launchSecurity": {}}).iommu


def test_memfd_for_hugepages_unless_annotated_off_and_for_shared_memory():
    huge = {"memory": {"guest": "1Gi", "hugepages": {"pageSize": "2Mi"}}}
    assert raw(huge).memfd and raw(huge).hugepage_size == 2 * 2**20
    assert not raw(huge, annotations={"kubevirt.io/memfd": "false"}).memfd
    assert not raw().memfd and raw().hugepage_size is None
    assert not raw(huge, architecture="s390x").memfd  # no memfd backing on s390x
    assert raw({"devices": {"filesystems": [{"name": "fs", "virtiofs": {}}]}}).memfd
    assert raw({"devices": {"interfaces": [{"name": "p", "binding": {"name": "passt"}}]}}).shared_memory
    assert raw({"devices": {"interfaces": [{"name": "p", "passtBinding": {}}]}}).shared_memory
    assert not raw({"devices": {"interfaces": [{"name": "b", "bridge": {}}]}}).shared_memory


def test_volumes_and_networks_by_name():
    conv = raw(volumes=[{"name": "a", "emptyDisk": {}}, {"name": "b", "containerDisk": {}}],
               networks=[{"name": "default", "pod": {}}])
    assert conv.volumes == {"a": (0, {"name": "a", "emptyDisk": {}}), "b": (1, {"name": "b", "containerDisk": {}})}
    assert conv.networks == {"default": {"name": "default", "pod": {}}}
    assert raw().volumes == {} and raw().networks == {}
