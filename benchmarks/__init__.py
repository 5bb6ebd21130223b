"""Benchmarks that measure the numbers the course promises (run them as scripts)."""
