"""Fleet operations beside the webhook: audit what a policy would do to the VMs already stored, and
sweep them flat, deciding each VM through the same function as /mutate (`admission.mutate.answer_vm`)."""
