"""Tournaments as events: configuration, the plan, dispatching games to present bots, launching
bot processes, durable records, the audit and the live status."""
