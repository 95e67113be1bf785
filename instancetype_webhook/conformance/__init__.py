"""The conformance runner: upstream KubeVirt's answers, case by case, against ours (an edge: it imports the
layers below it; nothing imports it but the CLI and the tests)."""
