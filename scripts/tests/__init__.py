"""pytest tests of the tools (`python -m pytest -q scripts/tests`)."""
