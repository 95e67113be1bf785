"""Check, before timing a target, that it answers the review correctly.

A benchmark of error responses would measure nothing: each target gets one POST first, and the
harness records what came back (status, allowed, patch size) next to its figures.
"""
from __future__ import annotations

import base64
import ssl
import urllib.error
import urllib.request
from typing import Any

import orjson


def post(url: str, body: bytes, timeout: float = 10.0) -> tuple[int, bytes]:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _patch_ops(response: dict[str, Any]) -> list[Any]:
    patch = response.get("patch")
    return orjson.loads(base64.b64decode(patch)) if patch else []


def check_answer(url: str, body: bytes, want_patch: bool) -> dict[str, Any]:
    """POST `body` once; describe the answer and list what is wrong with it (empty = good)."""
    status, raw = post(url, body)
    problems: list[str] = []
    summary: dict[str, Any] = {"status": status, "response_bytes": len(raw), "problems": problems}
    if status != 200:
        problems.append(f"HTTP {status}: {raw[:300]!r}")
        return summary
    try:
        review = orjson.loads(raw)
        response = review["response"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        problems.append(f"not an AdmissionReview: {exc}")
        return summary
    uid = orjson.loads(body)["request"]["uid"]
    summary["allowed"] = response.get("allowed")
    if response.get("uid") != uid:
        problems.append(f"response.uid {response.get('uid')!r} != request.uid {uid!r}")
    if response.get("allowed") is not True:
        problems.append(f"not allowed: {orjson.dumps(response.get('status')).decode()[:300]}")
    ops = _patch_ops(response)
    summary["patch_operations"] = len(ops)
    if want_patch and not ops:
        problems.append("no patch from /mutate under the expand policy")
    return summary
