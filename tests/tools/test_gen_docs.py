"""tools/gen_docs.py: the chart-values page reads values.yaml's comments, and tells prose from commented-out keys."""
from __future__ import annotations

import importlib.util

import pytest

from tests.kit.shared_data import ROOT

_spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
assert _spec is not None and _spec.loader is not None
gen_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_docs)


def test_values_comments_are_read_by_path() -> None:
    text = ("# The policy.\n#   reference  keep\npolicy: reference\ntls:\n  # Where from.\n"
            "  source: helm  # or secret\n  certManager:\n    issuerRef: {}\n    #  name: my-ca\n    duration: 2h\n")
    comments = gen_docs.values_comments(text)
    assert comments["policy"] == "The policy. <br>reference  keep"
    assert comments["tls.source"] == "Where from. or secret"
    assert comments["tls.certManager.duration"] == ""  # a commented-out example key is not prose


@pytest.mark.parametrize("body", [
    "name: my-ca-issuer", "kind: ClusterIssuer", "group: cert-manager.io", "size: 256  # bits",
    "labels: {release: prometheus}", "extraArgs: [--debug]", 'tag: "1.2 rc"', "tag: '1.2'", "podAntiAffinity:",
    "grafana_dashboard: \"1\"", "scrape-timeout: 10s",
])
def test_a_key_name_with_one_value_is_a_commented_out_key(body: str) -> None:
    assert gen_docs.commented_out_key(body)


@pytest.mark.parametrize("body", [
    "0: ready at once.", "30: the default", "Fail: nothing is admitted unseen.",
    "policyreport: wgpolicyk8s.io/v1alpha2 PolicyReport (Kyverno's default, Policy Reporter);",
    'openreports: openreports.io/v1alpha1 Report; "": the Job\'s log only.', "e.g. grafana_folder: KubeVirt",
    "Where the serving certificate comes from:", '"" : cainjector fills caBundle', "With create: true the chart",
])
def test_prose_with_a_colon_is_not_a_commented_out_key(body: str) -> None:
    assert not gen_docs.commented_out_key(body)


def test_a_description_keeps_its_numbered_and_keyword_lines_and_drops_the_commented_out_keys() -> None:
    text = ("probes:\n"
            "  # Seconds before the pod turns ready:\n"
            "  # 0: ready at once;\n"
            "  # 30: after half a minute.\n"
            "  startGrace: 0\n"
            "  # policyreport: a PolicyReport per namespace;\n"
            "  # Fail: nothing is admitted unseen.\n"
            "  report: policyreport\n"
            "  issuerRef: {}\n"
            "  #  name: my-ca-issuer\n"
            "  #  kind: ClusterIssuer\n"
            "  duration: 2h\n")
    comments = gen_docs.values_comments(text)
    assert comments["probes.startGrace"] == \
        "Seconds before the pod turns ready: 0: ready at once; 30: after half a minute."
    assert comments["probes.report"] == "policyreport: a PolicyReport per namespace; Fail: nothing is admitted unseen."
    assert comments["probes.duration"] == ""
