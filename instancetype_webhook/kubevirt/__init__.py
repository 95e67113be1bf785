"""The pure KubeVirt instance type and preference core: plain data in, plain data out, no I/O."""
