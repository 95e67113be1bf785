"""`inferFromVolume`: a matcher's name and kind read from the labels of the object behind a volume
(upstream `pkg/instancetype/infer`). Pure: objects come through the Source protocol.

- `volume`: the volume -> PVC / DataVolume (template) / DataSource / VolumeSnapshot -> labels chains;
- `matchers`: the matchers replaced under their failure policies;
- `errors`: upstream's messages and which failures `Ignore` may swallow.
"""
from instancetype_webhook.kubevirt.infer.errors import InferenceError
from instancetype_webhook.kubevirt.infer.matchers import Inference, Inferred, infer_matchers, needs_inference
from instancetype_webhook.kubevirt.infer.volume import Defaults, Origin

__all__ = ["Defaults", "Inference", "InferenceError", "Inferred", "Origin", "infer_matchers", "needs_inference"]
