"""Why an inference failed, with upstream's texts (`pkg/instancetype/infer/volume.go`).

An error is *ignorable* when upstream wraps it in `IgnoreableInferenceError`: under
`inferFromVolumeFailurePolicy: Ignore` the matcher is then removed instead of the request denied.
A missing volume and every failed lookup (missing PVC, DataVolume's PVC, DataSource, VolumeSnapshot,
an API that is not installed) are never ignorable.
"""
from __future__ import annotations

from typing import Final

UNSUPPORTED_VOLUME_TYPE: Final = "unable to infer defaults from volume {volume} as type is not supported"
MISSING_VOLUME: Final = "unable to find volume {volume} to infer defaults"
MISSING_LABEL: Final = "unable to find required {label} label on the volume"
UNSUPPORTED_DATA_VOLUME_SOURCE: Final = (
    "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported")
UNSUPPORTED_SOURCE_REF_KIND: Final = "unable to infer defaults from DataVolumeSourceRef as Kind {kind} is not supported"
# before KubeVirt v1.9 (releases.INFER_FROM_SNAPSHOTS) a DataSource was followed to its PVC only
MISSING_DATA_SOURCE_PVC: Final = "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC"
MISSING_DATA_SOURCE_SOURCE: Final = (
    "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC or DataVolumeSourceSnapshot"
)


class InferenceError(Exception):
    """An inference failure: `message` is what the webhook answers (code 400)."""

    def __init__(self, message: str, ignorable: bool = False):
        super().__init__(message)
        self.message = message
        self.ignorable = ignorable


def ignorable(message: str) -> InferenceError:
    return InferenceError(message, ignorable=True)
