"""Webhooks: endpoints an owner registers, to which the change feed is delivered."""
