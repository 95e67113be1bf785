"""libvirt domain XML generator: what virt-launcher's converter would hand libvirt for a VMI (or a flat VM).

Pure: no I/O. Entry points:
- render_domain(vmi, context=None, env=None, config=None) -> XML text (raises DomainError when upstream's
  converter would fail); `config` (domxml.cluster.domain_config(KubeVirt CR configuration)) drives the
  VMI defaults and the launcher context
- vmi_from_vm(vm, uid=None) -> the VMI virt-controller would create
- render_stored_vm(...) (instancetype_webhook.domxml.stored) -> the XML of a VM as it will be stored under a policy
- canonical_xml(xml), xml_equal(a, b) -> compare domain XML semantically
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lxml import etree

from instancetype_webhook.domxml.cluster import (
    DEFAULT_DOMAIN_CONFIG,
    DomainConfig,
    domain_config,
    domain_config_from_settings,
)
from instancetype_webhook.domxml.compare import canonical_xml, xml_equal
from instancetype_webhook.domxml.context import LauncherContext, NumaCell, SMBios, context_from_converter
from instancetype_webhook.domxml.domain import build_domain
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.domxml.vmi import vmi_from_vm
from instancetype_webhook.domxml.vmi_defaults import apply_vmi_defaults

__all__ = ["DomainConfig", "DomainError", "LauncherContext", "NumaCell", "SMBios", "canonical_xml",
           "context_from_converter", "domain_config", "domain_config_from_settings", "render_domain",
           "render_domain_element", "vmi_from_vm", "xml_equal"]


def render_domain_element(vmi: dict[str, Any], context: LauncherContext | None = None,
                          env: Mapping[str, str] | None = None, config: DomainConfig | None = None) -> etree._Element:
    if not isinstance(vmi, dict) or not isinstance(vmi.get("spec"), dict):
        raise DomainError("not a VirtualMachineInstance: spec is missing")
    if not isinstance(vmi["spec"].get("domain", {}), dict):
        raise DomainError("spec.domain must be an object")
    ctx = (context or LauncherContext()).with_env(env)
    if config is not None:
        ctx = config.launcher_context(ctx)
    try:
        return build_domain(apply_vmi_defaults(vmi, config or DEFAULT_DOMAIN_CONFIG), ctx)
    except DomainError:
        raise
    except (TypeError, AttributeError, KeyError, ValueError) as exc:  # malformed VMI fields
        raise DomainError(f"cannot convert the VMI: malformed field ({type(exc).__name__}: {exc})") from exc


def render_domain(vmi: dict[str, Any], context: LauncherContext | None = None,
                  env: Mapping[str, str] | None = None, config: DomainConfig | None = None) -> str:
    """The domain XML (two-space indented, like upstream's xml.MarshalIndent) for a VMI."""
    root = render_domain_element(vmi, context, env, config)
    return etree.tostring(root, pretty_print=True, encoding="unicode")
