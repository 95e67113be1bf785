"""The KubeVirt CR's configuration in the domain (domxml/cluster.py): VMI defaults and launcher context."""
from __future__ import annotations

from lxml import etree

from instancetype_webhook.domxml import domain_config, render_domain
from instancetype_webhook.domxml.cluster import DEFAULT_DOMAIN_CONFIG, domain_config_from_settings
from instancetype_webhook.domxml.context import context_from_converter
from instancetype_webhook.domxml.stored import render_stored_vm
from instancetype_webhook.kubevirt.releases import EDK2_OVMF_LAYOUT, NUMA_DISTANCES, PANIC_DEVICE_CREATION
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.builders import vm as build_vm
from tests.kit.domxml import make_vmi
from tests.kit.releases import settings_as, sides
from tests.kit.shared_data import conformance_cases

EFI = {"memory": {"guest": "1Gi"}, "firmware": {"bootloader": {"efi": {"secureBoot": False}}}}


def render(vmi: dict, configuration: dict | None) -> etree._Element:
    return etree.fromstring(render_domain(vmi, config=domain_config(configuration)).encode())


def test_no_configuration_is_upstreams_defaults():
    assert domain_config(None) is DEFAULT_DOMAIN_CONFIG and domain_config({}) is DEFAULT_DOMAIN_CONFIG
    assert render_domain(make_vmi(EFI)) == render_domain(make_vmi(EFI), config=domain_config({}))


def test_a_whole_kubevirt_cr_is_accepted():
    cr = {"kind": "KubeVirt", "spec": {"configuration": {"cpuModel": "Haswell"}}}
    assert domain_config(cr).cpu_model == "Haswell"


def test_smbios_merges_field_by_field_and_balloon_period():
    root = render(make_vmi(), {"smbios": {"manufacturer": "ACME", "sku": "7"}, "memBalloonStatsPeriod": 0})
    entries = {e.get("name"): e.text or "" for e in root.findall("sysinfo/system/entry")}
    assert entries["manufacturer"] == "ACME" and entries["family"] == "KubeVirt" and entries["product"] == "None"
    assert entries["sku"] == "7" and entries["version"] == ""
    assert root.find("devices/memballoon/stats") is None  # period 0: no stats
    assert render(make_vmi(), {"memBalloonStatsPeriod": 30}).find("devices/memballoon/stats").get("period") == "30"


def test_virtual_machine_options():
    root = render(make_vmi(), {"virtualMachineOptions": {"disableFreePageReporting": {},
                                                         "disableSerialConsoleLog": {}}})
    assert root.find("devices/memballoon").get("freePageReporting") == "off"
    assert root.find("devices/serial/log") is None
    default = render(make_vmi(), None)
    assert default.find("devices/memballoon").get("freePageReporting") == "on"
    assert default.find("devices/serial/log") is not None


def test_cpu_model_but_arm64_keeps_host_passthrough():
    assert render(make_vmi(), {"cpuModel": "Skylake"}).find("cpu/model").text == "Skylake"
    assert render(make_vmi(architecture="arm64"), {"cpuModel": "Skylake"}).find("cpu").get("mode") == "host-passthrough"


def test_live_update_maxima_and_rollout_strategy():
    vmi = make_vmi({"memory": {"guest": "2Gi"}, "cpu": {"sockets": 2}})
    root = render(vmi, {"liveUpdateConfiguration": {"maxCpuSockets": 3, "maxGuest": "6Gi"}})
    assert root.find("vcpu").text == "3" and root.find("maxMemory").text == str(6 * 2**30)
    ratio = render(vmi, {"liveUpdateConfiguration": {"maxHotplugRatio": 2}})
    assert ratio.find("vcpu").text == "4" and ratio.find("maxMemory").text == str(4 * 2**30)
    below = render(vmi, {"liveUpdateConfiguration": {"maxCpuSockets": 1, "maxGuest": "1Gi"}})
    assert below.find("vcpu").text == "2" and below.find("maxMemory") is None  # guest above maxGuest: no hotplug
    stage = render(vmi, {"vmRolloutStrategy": "Stage"})
    assert stage.find("vcpus") is None and stage.find("maxMemory") is None


def test_ovmf_path_per_architecture_and_the_deprecated_global_one():
    arm = render(make_vmi(architecture="arm64"), {"architectureConfiguration": {"arm64": {"ovmfPath": "/fw/arm"}}})
    assert arm.find("os/loader").text == "/fw/arm/AAVMF_CODE.fd"
    amd = render(make_vmi(EFI), {"ovmfPath": "/fw"})
    assert amd.find("os/loader").text == "/fw/OVMF_CODE.secboot.fd"
    assert amd.find("os/nvram").get("template") == "/fw/OVMF_VARS.fd"


def test_cluster_defaults_reach_the_vmi():
    root = render(make_vmi(), {"architectureConfiguration": {"defaultArchitecture": "s390x"},
                               "network": {"defaultNetworkInterface": "masquerade"}})
    assert root.find("os/type").get("arch") == "s390x"
    assert root.find("devices/interface").get("type") == "ethernet"
    custom = render(make_vmi(), {"architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel9.6.0"}}})
    assert custom.find("os/type").get("machine") == "pc-q35-rhel9.6.0"


def test_the_merged_configuration_of_cluster_settings_is_read():
    from instancetype_webhook.domxml.cluster import domain_config_from_settings
    from instancetype_webhook.kubevirt.configuration import settings_from_configuration

    settings = settings_from_configuration({"smbios": {"product": "Box"}, "cpuModel": "Haswell"})
    config = domain_config_from_settings(settings)
    assert config.settings is settings and config.cpu_model == "Haswell"
    assert (config.smbios.manufacturer, config.smbios.product) == ("KubeVirt", "Box")
    # an invalid configuration is not used (virt-api keeps its last valid one): the SMBIOS stays the default
    invalid = domain_config({"smbios": {"product": "Box"}, "developerConfiguration": {"memoryOvercommit": -1}})
    assert invalid is DEFAULT_DOMAIN_CONFIG


def test_a_vmi_that_asks_for_the_serial_log_keeps_it_when_the_cluster_disables_it():
    off = {"virtualMachineOptions": {"disableSerialConsoleLog": {}}}
    assert render(make_vmi({"devices": {"logSerialConsole": True}}), off).find("devices/serial/log") is not None
    assert render(make_vmi({"devices": {"logSerialConsole": False}}), None).find("devices/serial/log") is None


# -- releases: what the release answered as changes in the domain ---------------------------------------------

def _case(name: str) -> dict:
    return next(c for c in conformance_cases() if c["name"] == name)


def _render_case_as(case: dict, version: str) -> etree._Element:
    section = case["domxml"]
    context = context_from_converter((section.get("input") or {}).get("converter"))
    config = domain_config_from_settings(settings_as(version))
    return etree.fromstring(render_domain(section["input"]["vmi"], context, config=config).encode())


def test_amd64_firmware_moved_to_the_edk2_directory_in_v1_9():
    """C8: the default amd64 ovmfPath is /usr/share/OVMF before v1.9, /usr/share/edk2/ovmf from v1.9."""
    before, after = sides(EDK2_OVMF_LAYOUT)
    case = _case("preference-field.firmware-preferredUseSecureBoot-deprecated")
    old, new = _render_case_as(case, before.name), _render_case_as(case, after.name)
    assert old.find("os/loader").text == "/usr/share/OVMF/OVMF_CODE.secboot.fd"
    assert old.find("os/nvram").get("template").startswith("/usr/share/OVMF/")
    assert new.find("os/loader").text == "/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd"
    assert render(make_vmi(EFI), None).find("os/loader").text.startswith("/usr/share/edk2/ovmf/")  # main


def test_guest_numa_cells_carry_distances_on_main_only():
    """D3: NUMA passthrough cells get <distances> on main, not on v1.9.0."""
    before, after = sides(NUMA_DISTANCES)
    case = _case("common-instancetype.cx1.large1gi.typical")
    old, new = _render_case_as(case, before.name), _render_case_as(case, after.name)
    assert old.findall("cpu/numa/cell") and not old.findall("cpu/numa/cell/distances")
    assert [s.attrib for s in new.findall("cpu/numa/cell/distances/sibling")] == [{"id": "0", "value": "10"}]


def test_a_preferred_panic_device_model_reaches_the_domain_from_v1_9_only():
    """C3 through the stored VM and the VMI started from it: no <panic> when answering as v1.8."""
    before, after = sides(PANIC_DEVICE_CREATION)
    pref = {"kind": "VirtualMachineClusterPreference", "metadata": {"name": "panicky"},
            "spec": {"devices": {"preferredPanicDeviceModel": "hyperv"}}}
    vm = build_vm("v", "ns", typed=False, domain={"devices": {}, "memory": {"guest": "1Gi"}},
                  spec={"preference": {"name": "panicky"}})
    for policy in ("reference", "expand"):
        xml = {r.name: etree.fromstring(render_stored_vm(vm, InMemorySource([pref]), policy,
                                                         domain_config_from_settings(settings_as(r.name))).encode())
               for r in (before, after)}
        assert xml[before.name].findall("devices/panic") == []
        assert [p.get("model") for p in xml[after.name].findall("devices/panic")] == ["hyperv"]
