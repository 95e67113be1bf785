"""ClusterConfiguration: virt-api's rules for which KubeVirt CR configuration is in use."""
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.sources.kubevirt_cr import ClusterConfiguration


def kubevirt(rv: str, configuration=None, name="kubevirt", namespace="kubevirt", phase="Deployed", generation=1):
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv, "generation": generation},
            "spec": {"configuration": configuration or {}}, "status": {"phase": phase} if phase else {}}


def test_changes_reach_the_listeners_and_invalid_ones_are_skipped():
    config = ClusterConfiguration()
    seen: list[ClusterSettings] = []
    config.subscribe(seen.append)
    assert seen == [DEFAULT_SETTINGS] and "no KubeVirt CR found" in config.describe()
    config.update([kubevirt("1", {"evictionStrategy": "LiveMigrate"})])
    assert seen[-1].eviction_strategy == "LiveMigrate"
    assert config.describe() == "KubeVirt kubevirt/kubevirt generation 1 (resourceVersion 1)"
    config.update([kubevirt("1", {"evictionStrategy": "LiveMigrate"})])  # same resourceVersion: nothing new
    config.update([kubevirt("2", {"developerConfiguration": {"memoryOvercommit": -1}}, generation=2)])  # invalid
    assert len(seen) == 2 and config.settings.eviction_strategy == "LiveMigrate"
    config.update([kubevirt("3", {"evictionStrategy": "External"}, generation=3)])
    assert (seen[-1].eviction_strategy, seen[-1].generation) == ("External", 3)
    config.update([])  # the CR is gone: virt-api keeps the last configuration
    assert config.settings.eviction_strategy == "External" and len(seen) == 3


def test_fallback_until_a_cr_is_deployed_and_pinning():
    fallback = ClusterSettings(default_network_binding="masquerade", origin="environment")
    config = ClusterConfiguration(fallback, pinned="kubevirt/chosen")
    config.update([kubevirt("1", {"cpuRequest": "1"}, name="other")])
    assert config.settings == fallback and "no KubeVirt kubevirt/chosen found" in config.describe()
    config.update([kubevirt("2", {"cpuRequest": "2"}, name="chosen", phase="")])
    assert config.settings == fallback and "status.phase" in config.describe()
    config.update([kubevirt("3", {"cpuRequest": "3"}, name="chosen")])
    assert config.settings.cpu_request == "3" and config.settings.default_network_binding == "bridge"


def test_unavailable_api_says_why():
    config = ClusterConfiguration()
    config.unavailable("cannot list kubevirts (HTTP 403)")
    assert config.describe() == "cannot list kubevirts (HTTP 403): KubeVirt's defaults apply"
