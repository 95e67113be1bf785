"""The test kit: the helpers many test modules share, each in one place.

- `builders`: a KubeVirt VirtualMachine (`vm`) and an AdmissionReview (`review`) with keyword options.
- `cli`: run the `instancetype-webhook` command, in a subprocess (`run_cli`) or in this process (`run_main`).
- `wait`: poll until a condition holds, failing with what was awaited (`wait_for`).
- `server`: the real `serve` (uvicorn, TLS) on loopback, ready, with its log, stopped afterwards (`serve`).
"""
