"""The tournament and what steers it: preparation and resume, the plan released round by round, the fault and
absence policies, who plays on, what the organiser sees, and what the run reports when it ends."""
