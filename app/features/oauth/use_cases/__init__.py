"""The OAuth operations, one per module."""
