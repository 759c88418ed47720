"""Slack listeners, one module per way people ask. Each ``register(app, deps)`` adds its
listeners; every listener acks first and does its work in ``deps.background`` after."""
