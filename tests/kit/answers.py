"""The fuzz property: what counts as a well-formed answer from the webhook."""
from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import jsonpatch

MAX_WARNING = 120


def problems(resp: httpx.Response, sent: Any) -> list[str]:
    """Why `resp` is not a well-formed answer to the body `sent` (decoded, or None if not JSON):
    200 with an AdmissionReview whose uid matches, or a 4xx JSON error; never 5xx, never a crash
    hidden in a 200 (status code 500)."""
    if resp.status_code >= 500:
        return [f"HTTP {resp.status_code}: {resp.text[:300]}"]
    try:
        body = resp.json()
    except ValueError:
        return [f"HTTP {resp.status_code} body is not JSON: {resp.text[:200]!r}"]
    if resp.status_code != 200:
        if not (400 <= resp.status_code < 500):
            return [f"unexpected HTTP {resp.status_code}"]
        if type(body) is not dict or not isinstance(body.get("error") or body.get("detail"), (str, list)):
            return [f"4xx without a JSON error: {body!r:.200}"]
        return []
    return review_problems(body, sent)


def review_problems(body: Any, sent: Any) -> list[str]:
    out: list[str] = []
    if type(body) is not dict or body.get("kind") != "AdmissionReview":
        return [f"not an AdmissionReview: {body!r:.200}"]
    if type(sent) is dict and body.get("apiVersion") != sent.get("apiVersion"):
        out.append(f"apiVersion {body.get('apiVersion')!r} != request's {sent.get('apiVersion')!r}")
    answer = body.get("response")
    if type(answer) is not dict or type(answer.get("allowed")) is not bool:
        return out + [f"response without allowed: {answer!r:.200}"]
    request = sent.get("request") if type(sent) is dict else None
    if type(request) is dict and answer.get("uid") != request.get("uid"):
        out.append("response.uid != request.uid")
    status = answer.get("status") or {}
    if not answer["allowed"]:
        if type(status.get("message")) is not str or not status["message"]:
            out.append(f"denial without a message: {status!r:.200}")
        if status.get("code") == 500 or "internal error" in str(status.get("message")):
            out.append(f"internal error: {status.get('message')}")
    for warning in answer.get("warnings") or []:
        if len(warning) > MAX_WARNING:
            out.append(f"warning over {MAX_WARNING} characters")
    if "patch" in answer:
        out += _patch_problems(answer, request)
    return out


def _patch_problems(answer: dict[str, Any], request: Any) -> list[str]:
    if answer.get("patchType") != "JSONPatch" or not answer["allowed"]:
        return ["patch without patchType JSONPatch, or on a denial"]
    try:
        ops = json.loads(base64.b64decode(answer["patch"], validate=True))
        jsonpatch.apply_patch(request["object"], ops, in_place=False)
    except Exception as exc:  # any failure here is the finding
        return [f"patch does not apply to the object: {type(exc).__name__}: {exc}"]
    return []
