"""<hostdev> (domxml/hostdevices.py): PCI and mediated devices from the device-plugin environment."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, LauncherContext
from instancetype_webhook.domxml.hostdevices import hostdev_elements, resource_variable
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_hostdevs_from_device_plugin_env():
    assert (resource_variable("PCI_RESOURCE_", "nvidia.com/TU104GL_Tesla_T4")
            == "PCI_RESOURCE_NVIDIA_COM_TU104GL_TESLA_T4")
    vmi = make_vmi({"devices": {"gpus": [{"name": "g", "deviceName": "nvidia.com/T4"}],
                                "hostDevices": [{"name": "h", "deviceName": "intel.com/qat"}]}})
    ctx = LauncherContext(env={"PCI_RESOURCE_NVIDIA_COM_T4": "0000:81:00.0",
                               "PCI_RESOURCE_INTEL_COM_QAT": "0000:3b:01.2"})
    assert_xml(hostdev_elements(conversion(vmi, ctx)),
               '<hostdev type="pci" managed="no"><source><address type="pci" domain="0x0000" bus="0x3b" slot="0x01" '
               'function="0x2"/></source><alias name="ua-hostdevice-h"/></hostdev>'
               '<hostdev type="pci" managed="no"><source><address type="pci" domain="0x0000" bus="0x81" slot="0x00" '
               'function="0x0"/></source><alias name="ua-gpu-g"/></hostdev>')
    with pytest.raises(DomainError, match="GPU host-devices"):
        hostdev_elements(conversion(vmi, LauncherContext(env={"PCI_RESOURCE_INTEL_COM_QAT": "0000:3b:01.2"})))


def test_vgpu_mdev_gets_display_and_ramfb_on_the_first_device():
    vmi = make_vmi({"devices": {"gpus": [{"name": "a", "deviceName": "nvidia.com/GRID"},
                                         {"name": "b", "deviceName": "nvidia.com/GRID"}]}})
    ctx = LauncherContext(env={"MDEV_PCI_RESOURCE_NVIDIA_COM_GRID": "u-1,u-2"})
    assert_xml(hostdev_elements(conversion(vmi, ctx)),
               '<hostdev type="mdev" mode="subsystem" model="vfio-pci" display="on" ramfb="on">'
               '<source><address type="" bus="" uuid="u-1"/></source><alias name="ua-gpu-a"/></hostdev>'
               '<hostdev type="mdev" mode="subsystem" model="vfio-pci">'
               '<source><address type="" bus="" uuid="u-2"/></source><alias name="ua-gpu-b"/></hostdev>')
