"""The start of a bot's process: the launcher, the sandbox, the start step, the control groups, the bots' logs
and the arena's temporary folders."""
