"""The webhook use cases."""
