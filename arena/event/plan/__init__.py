"""The plan of a tournament and what its results folder says of it: the plan and its planner, the schedule's
blocks, the manifest (``manifest.json``) and the live status (``status.json``)."""
