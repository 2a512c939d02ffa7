"""The change feed's use cases."""
