"""Pure-numpy reference implementations, written from the spec (no GPU imports)."""
