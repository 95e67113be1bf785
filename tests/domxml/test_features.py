"""<features> (domxml/features.py): ACPI, APIC, Hyper-V enlightenments in upstream's order, KVM, vmport."""
from __future__ import annotations

from instancetype_webhook.domxml.features import features_element
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_features_default_acpi_and_vmport():
    assert_xml(features_element(conversion(make_vmi())), '<features><acpi/><vmport state="off"/></features>')


def test_features_hyperv_dependencies_and_order():
    vmi = make_vmi({"features": {"acpi": {"enabled": False}, "apic": {}, "smm": {}, "kvm": {"hidden": True},
                                 "pvspinlock": {"enabled": False},
                                 "hyperv": {"synictimer": {"direct": {}}, "spinlocks": {},
                                            "vendorid": {"vendorid": "kv"},
                                            "relaxed": {"enabled": False}},
                                 "hypervPassthrough": {"enabled": True}}})
    assert_xml(features_element(conversion(vmi)), '<features><apic/><hyperv>'
               '<relaxed state="off"/><spinlocks state="on" retries="4096"/><vpindex state="on"/>'
               '<synic state="on"/><stimer state="on"><direct state="on"/></stimer>'
               '<vendor_id state="on" value="kv"/></hyperv><smm/><kvm><hidden state="on"/></kvm>'
               '<pvspinlock state="off"/><vmport state="off"/></features>')
