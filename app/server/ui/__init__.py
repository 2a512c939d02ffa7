"""The memory browser: static pages at /ui/ that call the JSON API with a token."""
