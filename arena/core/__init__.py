"""The rules core: cards, rules, scoring, dealing, the game state machine and the seat views.

Pure: no I/O, no clock, no network; nothing here imports from the other layers.
"""
