"""The playground in a real browser (Debian's Chromium) against the real `serve --dev` process: what a
person sees. Screenshots of the main views are kept (the directory is printed at the end of the run;
INSTANCETYPE_WEBHOOK_SCREENSHOTS=DIR keeps them there instead)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kit.browser import SHOTS, after_run, chromium, runs, wait

HOSTILE = "<img src=x onerror=window.pwned=1>"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("INSTANCETYPE_WEBHOOK_SCREENSHOTS")
    directory = Path(where) if where else tmp_path_factory.mktemp("playground-screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def page(browser, dev_server) -> Any:
    """The playground freshly loaded, its first answer (the first sample) shown."""
    browser.get("about:blank")
    browser.get(dev_server.url + "/playground")
    wait(browser, lambda d: runs(d) >= 1)
    return browser


def screenshot(driver: Any, directory: Path, name: str) -> None:
    path = directory / f"{name}.png"
    driver.save_screenshot(str(path))
    SHOTS.append(path)


def texts(driver: Any, css: str) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), e => e.textContent)", css)


def click_sample(driver: Any, name: str) -> None:
    button = next(b for b in driver.find_elements("css selector", "button.sample") if b.text == name)
    after_run(driver, runs(driver), button.click)


def paste(driver: Any, text: str) -> None:
    """Put `text` in the editor as a paste does (the page runs it after a short pause)."""
    after_run(driver, runs(driver), lambda: driver.execute_script(
        "const t = document.getElementById('text'); t.value = arguments[0];"
        "t.dispatchEvent(new Event('input', {bubbles: true}))", text))


def choose(driver: Any, element_id: str, value: str) -> None:
    """Type into an input (or pick an option) and leave it, as a person does."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    element = driver.find_element("id", element_id)
    if element.tag_name == "select":
        after_run(driver, runs(driver), lambda: Select(element).select_by_value(value))
        return
    element.clear()
    after_run(driver, runs(driver), lambda: element.send_keys(value, Keys.TAB))


def tab(driver: Any, name: str) -> None:
    driver.find_element("css selector", f'.tabs button[data-tab="{name}"]').click()
    wait(driver, lambda d: d.find_element("id", f"tab-{name}").is_displayed())


def test_the_expand_sample_is_shown_flat_beside_the_vm_as_sent(page, shots):
    assert page.find_element("id", "verdict").text.startswith("Allowed, patched: 18 JSONPatch operation(s)")
    right = texts(page, "#diff span.r")
    left_removed = texts(page, "#diff span.l.removed")
    assert "  instancetype:" not in right and "  preference:" not in right
    assert {"  instancetype:", "    name: u1.medium", "  preference:", "    name: fedora"} <= set(left_removed)
    assert "guest: 4Gi" in [t.strip() for t in texts(page, "#diff span.r.added")]
    assert page.find_element("id", "stored-head").text == "VM as stored (flat)"
    screenshot(page, shots, "playground-expand")


def test_a_conflict_highlights_its_fields_in_the_editor(page, shots):
    click_sample(page, "conflict")
    assert page.find_element("id", "verdict").text.startswith("Refused by the mutating webhook (/mutate): HTTP 422")
    assert [t.strip() for t in texts(page, "#backdrop div.cause")] == ["sockets: 4", "guest: 8Gi"]
    assert texts(page, "#gutter div.cause") == ["19", "21"]
    assert "sockets: 4" in [t.strip() for t in texts(page, "#diff span.l")] and texts(page, "#diff span.r") == []
    assert page.find_element("id", "stored-head").text == "not stored"
    causes = page.find_elements("css selector", "#causes button.cause-path")
    assert [c.text for c in causes] == ["spec.template.spec.domain.cpu.sockets",
                                        "spec.template.spec.domain.memory.guest"]
    causes[1].click()
    selected = page.execute_script("const t = document.getElementById('text');"
                                   "return t.value.slice(t.selectionStart, t.selectionEnd)")
    assert selected == "guest: 8Gi"
    page.execute_script("const t = document.getElementById('text'); t.scrollTop = t.scrollHeight;"
                        "t.dispatchEvent(new Event('scroll'))")
    offsets = page.execute_script(
        "return ['text', 'backdrop', 'gutter'].map(i => document.getElementById(i).scrollTop)")
    assert offsets[0] > 0 and offsets == [offsets[0]] * 3  # the highlights stay on their lines, scrolled to the end
    screenshot(page, shots, "playground-conflict")


def test_the_domain_xml_of_the_stored_vm(page, shots):
    tab(page, "domain")
    xml = page.find_element("id", "domain").text
    assert xml.startswith("<domain") and '<memory unit="b">4294967296</memory>' in xml
    assert "under expand" in page.find_element("id", "domain-note").text
    screenshot(page, shots, "playground-domain-xml")


def test_resize_shows_the_new_vm(page, shots):
    tab(page, "resize")
    choose(page, "resize-instancetype", "u1.2xlarge")
    assert page.find_element("id", "resize-note").text.startswith("Resized:")
    assert "guest: 32Gi" in [t.strip() for t in texts(page, "#resize-diff span.r.changed")]
    screenshot(page, shots, "playground-resize")


def test_a_patch_operation_leads_to_its_line(page, shots):
    tab(page, "patch")
    screenshot(page, shots, "playground-patch")
    ops = page.find_elements("css selector", "#patch li")
    cpu = next(li for li in ops if " /spec/template/spec/domain/cpu " in li.text)
    cpu.find_element("css selector", "button.jump").click()
    assert page.find_element("id", "tab-diff").is_displayed()
    assert [t.strip() for t in texts(page, "#diff span.flash")] == ["cpu:"]


def test_the_link_restores_what_was_seen(page, dev_server):
    click_sample(page, "reference")
    choose(page, "policy", "expand")
    choose(page, "instancetype", "u1.large")
    tab(page, "patch")
    url = page.current_url
    assert url.startswith(dev_server.url + "/playground#z=")
    seen = {"text": page.find_element("id", "text").get_attribute("value"),
            "verdict": page.find_element("id", "verdict").text, "patch": texts(page, "#patch li")}
    assert "    name: u1.large" in texts(page, "#diff span.l")
    with chromium() as other:  # a new browser with a fresh profile: only the link is shared
        other.get(url)
        wait(other, lambda d: runs(d) >= 1)
        assert other.find_element("id", "text").get_attribute("value") == seen["text"]
        assert other.find_element("id", "policy").get_attribute("value") == "expand"
        assert other.find_element("id", "instancetype").get_attribute("value") == "u1.large"
        assert other.find_element("id", "tab-patch").is_displayed()
        assert other.find_element("id", "verdict").text == seen["verdict"]
        assert texts(other, "#patch li") == seen["patch"] and seen["patch"]


def test_the_warnings_are_listed(page):
    click_sample(page, "reference")
    choose(page, "policy", "expand")
    choose(page, "instancetype", "u1.large")
    choose(page, "preference", "windows.11.virtio")
    assert texts(page, "#warnings li") == ["flattening changes input default-0: bus virtio -> usb"]


def test_hostile_text_is_shown_as_text(page, shots):
    vm = ("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n"
          f"  name: '{HOSTILE}'\n  annotations:\n    note: '<script>window.pwned=2</script>'\n"
          "spec:\n  instancetype:\n    name: u1.medium\n  template:\n    spec:\n      domain:\n        devices: {}\n")
    paste(page, vm)
    assert "  name: <img src=x onerror=window.pwned=1>" in texts(page, "#diff span.l")
    choose(page, "instancetype", HOSTILE)  # a reference that does not exist: the message names it
    choose(page, "policy", "expand")
    assert HOSTILE in page.find_element("id", "verdict").text
    assert page.execute_script("return document.querySelectorAll('img, script:not([src])').length") == 0
    assert page.execute_script("return window.pwned === undefined")
    screenshot(page, shots, "playground-hostile")


def test_bad_yaml_is_answered_with_its_line_and_column(page):
    from selenium.webdriver.common.keys import Keys

    editor = page.find_element("id", "text")
    editor.send_keys(Keys.CONTROL, "a")
    after_run(page, runs(page), lambda: editor.send_keys("kind: VirtualMachine\nspec:\n  running: [true\n"))
    verdict = page.find_element("id", "verdict").text
    assert verdict.startswith("Cannot run") and "line 4, column 1" in verdict
    assert texts(page, "#gutter div.error") == ["4"]


def test_a_dropped_file_is_loaded_and_run(page):
    text = "kind: VirtualMachine\napiVersion: kubevirt.io/v1\nmetadata: {name: dropped}\nspec: {template: {spec: {}}}\n"
    after_run(page, runs(page), lambda: page.execute_script(
        "const data = new DataTransfer(); data.items.add(new File([arguments[0]], 'vm.yaml'));"
        "document.getElementById('text').dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true}))",
        text))
    assert page.find_element("id", "text").get_attribute("value") == text
    assert page.find_element("id", "verdict").text.startswith("Allowed, unchanged")


def test_nothing_is_blocked_or_broken_on_the_page(page):
    problems = [e for e in page.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert problems == []


def test_an_unknown_field_is_underlined_at_its_key(page):
    vm = ("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: typo\nspec:\n  instancetype:\n"
          "    name: u1.medium\n  template:\n    spec:\n      domain:\n        cpu: {guest: 4}\n        devices: {}\n")
    paste(page, vm)
    assert texts(page, "#warnings li.unknown-field button") == [
        'Warning: unknown field "spec.template.spec.domain.cpu.guest"']
    assert texts(page, "#backdrop span.unknown") == ["guest"]
    line = page.find_element("css selector", "#backdrop span.unknown").find_element("xpath", "..")
    assert line.get_attribute("textContent") == "        cpu: {guest: 4}"
    page.find_element("css selector", "#warnings li.unknown-field button").click()
    start = page.execute_script("return document.getElementById('text').selectionStart")
    assert vm[start:start + 5] == "guest"
