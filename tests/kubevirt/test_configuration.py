from app.kubevirt.configuration import settings_from_configuration
from app.kubevirt.settings import DEFAULT_SETTINGS


def test_kubevirt_configuration_becomes_settings():
    assert settings_from_configuration(None) == DEFAULT_SETTINGS
    settings = settings_from_configuration(
        {
            "configuration": {
                "architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel9"}},
                "network": {"defaultNetworkInterface": "masquerade", "permitBridgeInterfaceOnPodNetwork": False},
                "evictionStrategy": "LiveMigrate",
                "cpuRequest": "200m",
            }
        }
    )
    assert settings.machine_type_for("amd64") == "pc-q35-rhel9"
    assert settings.machine_type_for("arm64") == "virt"
    assert (settings.default_network_binding, settings.permit_bridge_on_pod_network) == ("masquerade", False)
    assert (settings.eviction_strategy, settings.cpu_request) == ("LiveMigrate", "200m")
    wrapped = settings_from_configuration({"spec": {"configuration": {"evictionStrategy": "External"}}})
    assert wrapped.eviction_strategy == "External"
