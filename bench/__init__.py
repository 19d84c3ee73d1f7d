"""Benchmark scripts, one per operator (shipped inside the wheel as dmlwgsl.bench)."""
