"""virt-api's VMI create defaults (kubevirt/liveupdate/vmi_defaults.py), per architecture and release: the
running VMI the planner starts from and the VMI the domain XML is rendered from."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.liveupdate.vmi_defaults import (
    DefaultsConfig,
    defaults_config,
    supports_pcie_hotplug,
    vmi_create_defaults,
)
from instancetype_webhook.kubevirt.releases import LINES, resolve

DISKS = [{"name": "root", "disk": {}}, {"name": "iso", "cdrom": {}}, {"name": "san", "lun": {}},
         {"name": "given", "disk": {"bus": "scsi"}}, {"name": "bare"}]


def defaulted(domain: dict[str, Any], release: str = "main", configuration: dict | None = None,
              **spec: Any) -> dict[str, Any]:
    vmi = {"metadata": {"name": "vm1"}, "spec": {"domain": copy.deepcopy(domain), **spec}}
    settings = settings_from_configuration(configuration, release=resolve(release))
    vmi_create_defaults(vmi, settings, defaults_config(settings.configuration))
    return vmi


@pytest.mark.parametrize(("architecture", "bus"), [("amd64", "sata"), ("arm64", "virtio"), ("s390x", "virtio")])
def test_disk_cdrom_and_lun_buses_per_architecture(architecture: str, bus: str) -> None:
    disks = defaulted({"devices": {"disks": DISKS}}, architecture=architecture)["spec"]["domain"]["devices"]["disks"]
    assert disks == [{"name": "root", "disk": {"bus": bus}},
                     {"name": "iso", "cdrom": {"bus": bus, "readOnly": True, "tray": "closed"}},
                     {"name": "san", "lun": {"bus": bus}}, {"name": "given", "disk": {"bus": "scsi"}},
                     {"name": "bare", "disk": {"bus": bus}}]


@pytest.mark.parametrize(("architecture", "watchdog", "acpi", "model"), [
    ("amd64", {"i6300esb": {"action": "reset"}}, True, "host-model"),
    ("s390x", {"diag288": {"action": "reset"}}, False, "host-model"),
    ("arm64", {}, True, "host-passthrough"),
])
def test_watchdog_acpi_and_cpu_model_per_architecture(architecture: str, watchdog: dict, acpi: bool,
                                                      model: str) -> None:
    domain = defaulted({"devices": {"watchdog": {"name": "w"}}}, architecture=architecture)["spec"]["domain"]
    assert domain["devices"]["watchdog"] == {"name": "w", **watchdog}
    assert domain["features"]["acpi"] == {"enabled": acpi}
    assert domain["cpu"]["model"] == model


def test_a_cluster_cpu_model_wins_over_host_model_but_not_over_the_vmi_s() -> None:
    settings = settings_from_configuration({"cpuModel": "Haswell"})
    for cpu, expected in (({}, "Haswell"), ({"model": "Skylake"}, "Skylake")):
        vmi = {"spec": {"domain": {"cpu": dict(cpu)}}}
        vmi_create_defaults(vmi, settings, defaults_config(settings.configuration))
        assert vmi["spec"]["domain"]["cpu"]["model"] == expected


def test_arm64_gets_uefi_without_secure_boot_and_no_hotplug_maxima() -> None:
    domain = defaulted({"cpu": {"sockets": 2}, "memory": {"guest": "2Gi"}}, architecture="arm64")["spec"]["domain"]
    assert domain["firmware"] == {"bootloader": {"efi": {"secureBoot": False}}}
    assert "maxSockets" not in domain["cpu"] and "maxGuest" not in domain["memory"]


@pytest.mark.parametrize(("release", "secure_boot"), [("v1.7.4", None), ("v1.8.2", None), ("v1.8.3", False),
                                                      ("v1.8.4", False), ("main", False)])
def test_an_arm64_efi_without_secure_boot_is_defaulted_from_v1_8_3(release: str, secure_boot: bool | None) -> None:
    domain = defaulted({"firmware": {"bootloader": {"efi": {}}}}, release, architecture="arm64")["spec"]["domain"]
    assert domain["firmware"]["bootloader"]["efi"].get("secureBoot") is secure_boot


def test_an_arm64_efi_with_secure_boot_set_is_kept() -> None:
    domain = defaulted({"firmware": {"bootloader": {"efi": {"secureBoot": True}}}}, architecture="arm64")
    assert domain["spec"]["domain"]["firmware"]["bootloader"]["efi"] == {"secureBoot": True}


def test_feature_states_timers_spinlocks_and_tlbflush_children_are_enabled() -> None:
    hyperv = {"spinlocks": {}, "tlbflush": {"direct": {}, "extended": {"enabled": False}},
              "synictimer": {"direct": {}}}
    domain = defaulted({"features": {"smm": {}, "hyperv": hyperv},
                        "clock": {"timer": {"hpet": {}, "rtc": {"present": False}}}})
    features = domain["spec"]["domain"]["features"]
    assert features["smm"] == {"enabled": True}
    hyperv = features["hyperv"]
    assert hyperv["spinlocks"] == {"enabled": True, "spinlocks": 4096}
    assert hyperv["tlbflush"] == {"enabled": True, "direct": {"enabled": True}, "extended": {"enabled": False}}
    assert hyperv["synictimer"]["direct"] == {"enabled": True}
    assert hyperv["vpindex"] == {"enabled": True} and hyperv["synic"] == {"enabled": True}  # the dependencies
    assert domain["spec"]["domain"]["clock"]["timer"] == {"hpet": {"present": True}, "rtc": {"present": False}}


def test_probe_thresholds_are_raised_to_their_minima() -> None:
    spec = defaulted({}, livenessProbe={"tcpSocket": {"port": 22}, "periodSeconds": 5, "failureThreshold": 0})["spec"]
    assert spec["livenessProbe"] == {"tcpSocket": {"port": 22}, "periodSeconds": 5, "failureThreshold": 3,
                                     "timeoutSeconds": 1, "successThreshold": 1}


def test_status_memory_topology_and_nonroot_user() -> None:
    vmi = defaulted({"cpu": {"sockets": 2}, "memory": {"guest": "2Gi"}})
    assert vmi["status"] == {"memory": {"guestAtBoot": "2Gi", "guestCurrent": "2Gi", "guestRequested": "2Gi"},
                             "currentCPUTopology": {"sockets": 2}, "runtimeUser": 107}
    root = defaulted({}, configuration={"developerConfiguration": {"featureGates": ["Root"]}})
    assert "runtimeUser" not in root["status"]


@pytest.mark.parametrize("release", list(LINES))
@pytest.mark.parametrize(("cpu", "resources", "topology"), [
    ({"sockets": 2, "cores": 3, "threads": 2}, {}, {"sockets": 2, "cores": 3, "threads": 2}),
    ({"sockets": 2}, {}, {"sockets": 2}),
    ({"cores": 4, "threads": 0}, {}, {"cores": 4}),
    (None, {}, {"sockets": 1, "cores": 1, "threads": 1}),  # the default topology
    (None, {"requests": {"cpu": "0"}}, {"cores": 1, "threads": 1}),  # zero sockets from the CPU request
])
def test_current_cpu_topology_leaves_out_zero_counts_in_every_release(
        release: str, cpu: dict | None, resources: dict, topology: dict) -> None:
    """CPUTopology's fields are `omitempty` at every release tag: a zero count is absent, never 0."""
    domain = {**({"cpu": cpu} if cpu is not None else {}), **({"resources": resources} if resources else {})}
    assert defaulted(domain, release)["status"]["currentCPUTopology"] == topology


def test_a_current_cpu_topology_already_in_the_status_is_kept() -> None:
    vmi = {"metadata": {"name": "vm1"}, "spec": {"domain": {"cpu": {"sockets": 2}}},
           "status": {"currentCPUTopology": {"sockets": 1, "cores": 0}}}
    settings = settings_from_configuration(None, release=resolve("main"))
    vmi_create_defaults(vmi, settings, defaults_config(settings.configuration))
    assert vmi["status"]["currentCPUTopology"] == {"sockets": 1, "cores": 0}


def test_hotplug_maxima_under_live_update_only() -> None:
    live = defaulted({"cpu": {"sockets": 2}, "memory": {"guest": "2Gi"}})["spec"]["domain"]
    assert live["cpu"]["maxSockets"] == 8 and live["memory"]["maxGuest"] == "8Gi"
    staged = defaulted({"cpu": {"sockets": 2}, "memory": {"guest": "2Gi"}},
                       configuration={"vmRolloutStrategy": "Stage"})["spec"]["domain"]
    assert "maxSockets" not in staged["cpu"] and "maxGuest" not in staged["memory"]


@pytest.mark.parametrize(("architecture", "machine", "expected"), [
    ("amd64", None, True), ("amd64", "pc-q35-rhel9.6.0", True), ("amd64", "pc-i440fx-2.12", False),
    ("arm64", "virt", True), ("s390x", "s390-ccw-virtio", False), ("", None, True),
])
def test_pcie_hotplug_support(architecture: str, machine: str | None, expected: bool) -> None:
    domain = {"machine": {"type": machine}} if machine else {}
    assert supports_pcie_hotplug({"architecture": architecture, "domain": domain}) is expected


def test_the_pci_topology_annotation_follows_the_architecture_and_is_not_overwritten() -> None:
    assert defaulted({})["metadata"]["annotations"] == {"kubevirt.io/pci-topology-version": "v3"}
    assert "annotations" not in defaulted({}, architecture="s390x")["metadata"]
    kept = {"metadata": {"annotations": {"kubevirt.io/pci-topology-version": "v2"}}, "spec": {"domain": {}}}
    settings = settings_from_configuration(None)
    vmi_create_defaults(kept, settings, DefaultsConfig(settings.configuration))
    assert kept["metadata"]["annotations"] == {"kubevirt.io/pci-topology-version": "v2"}


@pytest.mark.parametrize(("release", "expected"), [("v1.8.4", None), ("v1.9.0", "/var/run/tdx-qgs/qgs.socket")])
def test_a_tdx_vmi_is_annotated_with_the_qgs_socket_from_v1_9(release: str, expected: str | None) -> None:
    vmi = defaulted({"launchSecurity": {"tdx": {}}}, release)
    assert vmi["metadata"]["annotations"].get("kubevirt.io/qgs-socket-path") == expected
