"""The path rules and reference texts of the memory tool (pure)."""
