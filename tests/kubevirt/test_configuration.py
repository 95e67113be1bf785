"""The KubeVirt CR -> ClusterSettings, as virt-config merges spec.configuration over its defaults."""
import pytest

from instancetype_webhook.kubevirt.configuration import (
    DEFAULT_CONFIGURATION,
    DEFAULT_SETTINGS,
    configuration_error,
    default_architecture,
    merge_configuration,
    settings_from_configuration,
    settings_from_kubevirt,
    usable_kubevirt,
)


def kubevirt(configuration=None, status=None, name="kubevirt", generation=1, **meta):
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": name, "namespace": "kubevirt", "generation": generation, "resourceVersion": "42",
                         **meta},
            "spec": {"configuration": configuration or {}}, "status": {"phase": "Deployed", **(status or {})}}


def test_no_configuration_is_the_defaults():
    assert settings_from_configuration(None) == DEFAULT_SETTINGS
    assert settings_from_configuration({}) == DEFAULT_SETTINGS
    defaults = settings_from_configuration({"cpuRequest": "100m"})
    assert ((defaults.architecture, defaults.machine_type, defaults.default_network_binding)
            == ("amd64", "q35", "bridge"))
    assert ((defaults.permit_bridge_on_pod_network, defaults.eviction_strategy, defaults.memory_overcommit)
            == (True, "None", 100))


@pytest.mark.parametrize(
    "configuration,attribute,value",
    [
        ({"architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel9.6.0"}}}, "machine_type",
         "pc-q35-rhel9.6.0"),
        # omitempty: no override
        ({"architectureConfiguration": {"amd64": {"machineType": ""}}}, "machine_type", "q35"),
        ({"machineType": "pc-q35-legacy"}, "machine_type", "pc-q35-legacy"),
        ({"architectureConfiguration": {"defaultArchitecture": "arm64"}}, "architecture", "arm64"),
        ({"network": {"defaultNetworkInterface": "masquerade"}}, "default_network_binding", "masquerade"),
        ({"network": {"defaultNetworkInterface": ""}}, "default_network_binding", "bridge"),
        ({"network": {"permitBridgeInterfaceOnPodNetwork": False}}, "permit_bridge_on_pod_network", False),  # *bool
        ({"evictionStrategy": "LiveMigrate"}, "eviction_strategy", "LiveMigrate"),
        ({"cpuRequest": "500m"}, "cpu_request", "500m"),
        ({"developerConfiguration": {"memoryOvercommit": 150}}, "memory_overcommit", 150),
        ({"developerConfiguration": {"memoryOvercommit": 0}}, "memory_overcommit", 100),  # omitempty int
        ({"developerConfiguration": {"featureGates": ["Sidecar"]}}, "memory_overcommit", 100),  # merged, not replaced
    ],
)
def test_one_setting_each(configuration, attribute, value):
    assert getattr(settings_from_configuration(configuration), attribute) == value


def test_top_level_machine_type_wins_for_every_architecture():
    settings = settings_from_configuration({"machineType": "m",
                                            "architectureConfiguration": {"arm64": {"machineType": "a"}}})
    assert [settings.machine_type_for(a) for a in ("amd64", "arm64", "s390x", "ppc64le")] == ["m"] * 4
    per_arch = settings_from_configuration({"architectureConfiguration": {"arm64": {"machineType": "virt-9"}}})
    assert [per_arch.machine_type_for(a) for a in ("amd64", "arm64", "s390x")] == ["q35", "virt-9", "s390-ccw-virtio"]


def test_merge_is_go_unmarshal_over_the_defaults():
    merged = merge_configuration({
        "smbios": {"product": "Acme"},
        "architectureConfiguration": {"amd64": {"emulatedMachines": ["pc*"]}, "arm64": {"emulatedMachines": []}},
        "memBalloonStatsPeriod": 0,  # *uint32: zero is kept
        "liveUpdateConfiguration": {"maxGuest": "6Gi", "maxHotplugRatio": 0},
        "cpuModel": "",
        "virtualMachineOptions": {"disableFreePageReporting": {}},
    })
    assert merged["smbios"] == {"family": "KubeVirt", "manufacturer": "KubeVirt", "product": "Acme"}
    assert merged["architectureConfiguration"]["amd64"] == {
        "ovmfPath": "/usr/share/edk2/ovmf", "emulatedMachines": ["pc*"], "machineType": "q35"}
    assert merged["architectureConfiguration"]["arm64"]["emulatedMachines"] == ["virt*"]  # an empty list is omitted
    assert merged["memBalloonStatsPeriod"] == 0
    assert merged["liveUpdateConfiguration"] == {"maxHotplugRatio": 4, "maxGuest": "6Gi"}
    assert "cpuModel" not in merged
    assert merged["virtualMachineOptions"] == {"disableFreePageReporting": {}}
    assert DEFAULT_CONFIGURATION["smbios"]["product"] == "None"  # the defaults are never written


@pytest.mark.parametrize(
    "configuration,error",
    [
        ({"imagePullPolicy": "Sometimes"}, "invalid dev.imagePullPolicy in config: Sometimes"),
        ({"developerConfiguration": {"memoryOvercommit": -5}}, "invalid memoryOvercommit in ConfigMap: -5"),
        ({"developerConfiguration": {"cpuAllocationRatio": -1}}, "invalid cpu allocation ratio in ConfigMap: -1"),
        ({"developerConfiguration": {"pvcTolerateLessSpaceUpToPercent": 101}},
         "invalid lessPVCSpaceToleration in ConfigMap: 101"),
        ({"network": {"defaultNetworkInterface": "sriov"}}, "invalid default-network-interface in config: sriov"),
        ({"network": {"defaultNetworkInterface": "slirp"}}, None),  # valid here, refused when a VM needs it
        ({"cpuRequest": "lots"}, "cannot decode cpuRequest"),
    ],
)
def test_validation_as_virt_config(configuration, error):
    found = configuration_error(merge_configuration(configuration))
    assert (found is None) if error is None else (found or "").startswith(error)
    if error is not None:  # an invalid configuration is not used: the last valid one (here the defaults) stays
        assert settings_from_configuration({**configuration, "evictionStrategy": "External"}) == DEFAULT_SETTINGS


def test_the_kubevirt_cr_status_names_the_default_architecture():
    settings = settings_from_kubevirt(kubevirt({"architectureConfiguration": {"defaultArchitecture": "s390x"}},
                                               {"defaultArchitecture": "arm64"}))
    assert settings.architecture == "arm64"  # the status, as virt-config reads it
    assert settings.configuration["architectureConfiguration"]["defaultArchitecture"] == "arm64"
    assert default_architecture(kubevirt({"architectureConfiguration": {"defaultArchitecture": "s390x"}}),
                                None) == "s390x"
    assert default_architecture(None, None) == "amd64"


def test_kubevirt_origin_and_generation():
    settings = settings_from_kubevirt(kubevirt({"evictionStrategy": "LiveMigrate"}, generation=7))
    assert (settings.origin, settings.generation, settings.resource_version) == ("KubeVirt kubevirt/kubevirt", 7, "42")
    assert settings.eviction_strategy == "LiveMigrate"
    assert settings_from_configuration(kubevirt({"cpuRequest": "1"})).cpu_request == "1"  # a whole CR works too
    assert settings_from_configuration({"configuration": {"cpuRequest": "2"}}).cpu_request == "2"  # and a KubeVirtSpec
    fallback = settings_from_kubevirt(kubevirt({"evictionStrategy": "LiveMigrate"}))
    assert settings_from_kubevirt(kubevirt({"imagePullPolicy": "Bad"}), fallback) is fallback


def test_usable_kubevirt_needs_a_phase_and_no_deletion():
    fresh = kubevirt(name="fresh")
    fresh["status"] = {}
    deleting = kubevirt(name="going", deletionTimestamp="2026-01-01T00:00:00Z")
    assert usable_kubevirt([fresh, deleting]) is None
    older = kubevirt(name="older", creationTimestamp="2025-01-01T00:00:00Z")
    newer = kubevirt(name="newer", creationTimestamp="2026-01-01T00:00:00Z")
    assert usable_kubevirt([newer, fresh, older])["metadata"]["name"] == "older"
