"""The admission decision for one review, with no HTTP in it: which policy applies (policy), the mutating
decision (mutate: the VM mutator stage, check-and-expand, the stored flat VM with its provenance, resize,
live-update warnings), the validating decision (validate) and the preview of a VM (preview). What /mutate,
/validate, /preview, audit, sweep, the CLI and the playground all call, so they cannot disagree.

Each module holds one idea: context (what a decision needs), review (the AdmissionReview envelope as plain
data), answer (allow, deny or patch), stored (the flat VM as stored), resize, liveupdate, policy.
"""
