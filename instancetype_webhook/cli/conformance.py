"""`instancetype-webhook conformance DIR [-k SUBSTRING] [--category CAT] [-v]`: run upstream's conformance cases.

Checks every member of each case (expectedInfer, expectedMutate, expected, expectedValidate.instancetype,
domxml.expected, domxml.fromVm, expectedLiveUpdate). Prints one line per failing case with its first
difference, the members that could not be checked, a table per category and per member (passed, failed,
not checked), and ends with `N passed, M failed` (`, K not checked` when some case had a member that could
not be checked).
Exit 0 only when no case failed (2 when DIR is not a directory).
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import TextIO

from instancetype_webhook.cli.inputs import InputError, release_note, release_option
from instancetype_webhook.conformance import runner
from instancetype_webhook.kubevirt.releases import from_kubevirt


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="run conformance case files (upstream KubeVirt's answers) through the library",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("directory", metavar="DIR",
                        help="directory of <case>.json files (in a source checkout, the public cases are "
                             "tests/data/shared/conformance)")
    parser.add_argument("-k", dest="substring", metavar="SUBSTRING", help="only cases whose name contains SUBSTRING")
    parser.add_argument("--category", metavar="CAT", help="only cases of category CAT (e.g. infer, update, arch)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    parser.add_argument("--kubevirt-version", metavar="R", default=None,
                        help="answer as KubeVirt release R (v1.7.4, v1.8.4, v1.9.0, main; unset: "
                             "$INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, else main; `auto`: main, as no KubeVirt CR is "
                             "read) and take the expected members from DIR/../conformance-releases/R/<case>.json")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        release = release_option(args.kubevirt_version)
    except InputError as exc:
        err.write(f"error: {exc}\n")
        return 2
    if release is None:  # `auto`: no KubeVirt CR is read here
        release = from_kubevirt(None)
        err.write(f"note: {release_note(release)}\n")
    empty = Path(args.directory).is_dir() and not any(Path(args.directory).glob("*.json"))
    try:
        code = runner.run(args.directory, io.StringIO() if empty else out, substring=args.substring,
                          verbose=args.verbose, category=args.category, release=release)
    except NotADirectoryError as exc:
        err.write(f"error: {exc}\n")
        return 2
    if empty:  # "0 passed" of no cases at all is a wrong DIR, not a pass
        err.write(f"error: {args.directory}: no <case>.json files (the public cases are tests/data/shared/"
                  "conformance)\n")
        return 2
    return code
