"""Checks of the project around the package: packaging, documentation, benchmarks, the layering rules."""
