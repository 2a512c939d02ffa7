"""OAuth 2.1 authorization for hosted assistants: clients, consent, tokens."""
