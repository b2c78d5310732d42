"""The repository's Python tools as one package, run from the repository root as
`python -m scripts.<kind>.<tool>` (scripts/README.md lists them by kind)."""
