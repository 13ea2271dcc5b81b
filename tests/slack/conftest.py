"""The real control plane (tests/support/controlplane.py), module-scoped, for the Slack modules
whose Kubernetes side runs on it: the same fixture as tests/integration's."""

from tests.integration.conftest import plane

__all__ = ["plane"]
