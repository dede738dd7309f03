"""A bot over stdin/stdout in ten lines: it calls the lowest call allowed and plays its lowest legal card."""
import json
import sys

RANKS = "23456789TJQKA"
for line in sys.stdin:  # one request per line; the arena closes stdin when the game is over
    request = json.loads(line)
    if request["type"] == "call":
        answer = {"call": request["legal_calls"][0]}
    elif request["type"] == "play":
        answer = {"card": min(request["legal_cards"], key=lambda card: RANKS.index(card[0]))}
    else:
        continue  # "game_over": nothing to answer
    print(json.dumps(answer), flush=True)  # one answer per line, at once (flush)
