"""virt-api's VMI create defaults (domxml/vmi_defaults.py): topology, buses, hotplug maxima, network,
Hyper-V dependencies."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, domain_config_from_settings, render_domain
from instancetype_webhook.domxml.vmi_defaults import apply_vmi_defaults
from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.releases import resolve
from tests.kit.domxml import conversion, make_vmi


def test_evmcs_requires_vapic_and_vmx():
    conv = conversion(make_vmi({"features": {"hyperv": {"evmcs": {}}}}))
    assert conv.features["hyperv"]["vapic"] == {"enabled": True}
    assert {"name": "vmx", "policy": "require"} in conv.cpu["features"]


def test_defaults_topology_buses_hotplug_and_network():
    vmi = make_vmi({"resources": {"limits": {"cpu": "3", "memory": "2Gi"}}, "memory": {},
                    "devices": {"disks": [{"name": "c", "cdrom": {}}], "watchdog": {"name": "w"}}},
                   volumes=[{"name": "c", "containerDisk": {"image": "x"}}, {"name": "extra", "emptyDisk": {}}])
    spec = apply_vmi_defaults(vmi)["spec"]
    domain = spec["domain"]
    assert domain["cpu"] == {"sockets": 3, "cores": 1, "threads": 1, "model": "host-model", "maxSockets": 12}
    assert domain["memory"] == {"guest": "2Gi", "maxGuest": "8Gi"}
    assert domain["resources"]["requests"] == {"cpu": "3"}
    assert domain["devices"]["disks"] == [{"name": "c", "cdrom": {"bus": "sata", "readOnly": True, "tray": "closed"}},
                                          {"name": "extra", "disk": {"bus": "sata"}}]
    assert domain["devices"]["watchdog"] == {"name": "w", "i6300esb": {"action": "reset"}}
    assert domain["devices"]["interfaces"] == [{"name": "default", "bridge": {}}]
    assert spec["networks"] == [{"name": "default", "pod": {}}]
    assert domain["machine"] == {"type": "q35"} and spec["architecture"] == "amd64"


@pytest.mark.parametrize("memory, cpu, expected", [
    ({"guest": "1536Mi"}, {}, "6Gi"),
    ({"guest": "1Gi", "hugepages": {"pageSize": "1Gi"}}, {}, "4Gi"),
    ({"guest": "1500Mi", "hugepages": {"pageSize": "1Gi"}}, {}, None),  # not 1Gi aligned
    ({"guest": "1025Mi"}, {}, None),  # not 2Mi aligned
    ({"guest": "2Gi"}, {"realtime": {}}, None),
    ({"guest": "512Mi"}, {}, None),
])
def test_memory_hotplug_rules(memory, cpu, expected):
    domain = apply_vmi_defaults(make_vmi({"memory": memory, "cpu": cpu}))["spec"]["domain"]
    assert domain["memory"].get("maxGuest") == expected


def test_cpu_hotplug_caps_at_512_vcpus():
    domain = apply_vmi_defaults(make_vmi({"cpu": {"sockets": 2, "cores": 100, "threads": 1}}))["spec"]["domain"]
    assert domain["cpu"]["maxSockets"] == 5


def test_no_default_interface_when_pod_interface_is_off():
    spec = apply_vmi_defaults(make_vmi({"devices": {"autoattachPodInterface": False}}))["spec"]
    assert "interfaces" not in spec["domain"]["devices"] and "networks" not in spec


def test_topology_without_sockets_gets_no_cpu_hotplug():
    domain = apply_vmi_defaults(make_vmi({"cpu": {"cores": 4}}))["spec"]["domain"]
    assert "maxSockets" not in domain["cpu"]
    xml = render_domain(make_vmi({"cpu": {"cores": 4}}))
    assert '<topology sockets="1" cores="4" threads="1"/>' in xml and "<vcpus>" not in xml


ARM64_EFI = {"firmware": {"uuid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "bootloader": {"efi": {}}}}


def _release_config(release: str):
    return domain_config_from_settings(settings_from_configuration(None, release=resolve(release)))


@pytest.mark.parametrize("release", ["v1.7.4", "v1.8.2"])
def test_an_arm64_efi_without_secure_boot_asks_for_secure_boot_before_v1_8_3(release):
    vmi = make_vmi(ARM64_EFI, architecture="arm64")
    assert "secureBoot" not in apply_vmi_defaults(vmi, _release_config(release))["spec"]["domain"]["firmware"][
        "bootloader"]["efi"]
    with pytest.raises(DomainError, match="SecureBoot=true"):  # the arm64 launcher has no secure-boot firmware
        render_domain(vmi, config=_release_config(release))


@pytest.mark.parametrize("release", ["v1.8.3", "v1.8.4", "main"])
def test_an_arm64_efi_without_secure_boot_boots_without_it_from_v1_8_3(release):
    vmi = make_vmi(ARM64_EFI, architecture="arm64")
    efi = apply_vmi_defaults(vmi, _release_config(release))["spec"]["domain"]["firmware"]["bootloader"]["efi"]
    assert efi == {"secureBoot": False}
    assert '<loader readonly="yes" secure="no" type="pflash">' in render_domain(vmi, config=_release_config(release))
