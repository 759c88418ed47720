"""HTTP routes, versioned under ``/v1`` (operations endpoints at the root)."""
