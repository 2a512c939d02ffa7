"""Claude's memory tool (``memory_20250818``) over Wenchang memory files."""
