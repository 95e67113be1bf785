"""A YAML or JSON syntax error, said where it is: `FILE:LINE:COL: not valid YAML or JSON: CONTEXT: PROBLEM`.

The position is the parser's (1-based, as the playground shows it); lines count from the top of the file, over
every document in it.
"""
from __future__ import annotations

import yaml

from instancetype_webhook.playground.yamlpos import problem_of

__all__ = ["syntax_message"]


def syntax_message(exc: BaseException, origin: str) -> str | None:
    """`FILE:LINE:COL: not valid YAML or JSON: CONTEXT: PROBLEM` when `exc` was caused by a YAML/JSON
    syntax error with a position; None otherwise (the caller keeps its own message)."""
    cause = exc.__cause__
    if not isinstance(cause, yaml.YAMLError):
        return None
    problem = problem_of(cause)
    if not problem.line:
        return None
    return f"{origin}:{problem.line}:{problem.column}: not valid YAML or JSON: {problem.message}"
