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



def test_tlbflush_carries_direct_and_extended_when_the_vmi_has_them():
    """v1.8's converter writes TLBFlush's Direct and Extended (off when disabled); a tlbflush without them is the
    plain feature state, as in v1.7. The domain is valid to libvirt's own schema."""
    from instancetype_webhook.domxml import render_domain
    from tests.kit.libvirt_schema import SCHEMA, schema_problem
    from tests.kit.needs import skip_missing

    both = make_vmi({"features": {"hyperv": {"tlbflush": {"direct": {}, "extended": {"enabled": False}}}}})
    plain = make_vmi({"features": {"hyperv": {"tlbflush": {"enabled": False}}}})
    assert_xml(features_element(conversion(both)).find("hyperv/tlbflush"),
               '<tlbflush state="on"><direct state="on"/><extended state="off"/></tlbflush>')
    assert_xml(features_element(conversion(plain)).find("hyperv/tlbflush"), '<tlbflush state="off"/>')
    if not SCHEMA.exists():
        skip_missing("libvirt's domain schema", "bash tests/data/shared/tools/libvirt-check.sh setup (.ci/run does)")
    problem = schema_problem(render_domain(both))
    assert problem is None, problem
