"""``callbreak-arena play``: a person plays a whole game in a pseudo-terminal, as at a keyboard."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

from tests.helpers.runs import ROOT


class Terminal:
    """``callbreak-arena play`` on a pseudo-terminal, read and typed into."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen([sys.executable, "-m", "arena", "play", *args], cwd=ROOT, stdin=slave,
                                        stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.screen = ""
        self.mark = 0
        """Where the output since the last line typed begins."""

    def read_until(self, *endings: str, timeout: float = 60.0) -> str:
        """Reads until the screen ends with one of ``endings`` (a prompt), or the program ends."""
        deadline = time.monotonic() + timeout
        while not self.screen[self.mark:].rstrip(" ").endswith(tuple(e.rstrip(" ") for e in endings)):
            assert time.monotonic() < deadline, f"no prompt; the screen ends: {self.screen[-500:]!r}"
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the program ended and closed the terminal
                    return ""
                if not chunk:
                    return ""
                self.screen += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
        return next(e for e in endings if self.screen.rstrip(" ").endswith(e.rstrip(" ")))

    def type(self, line: str) -> None:
        self.mark = len(self.screen)
        os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        os.close(self.master)


def test_a_person_plays_a_whole_game_and_a_refused_card_is_explained() -> None:
    terminal = Terminal("--opponents", "random", "--seed", "4")
    refused = explained = False
    calls = cards = 0
    try:
        while True:
            prompt = terminal.read_until("): ", "Your card: ")
            if not prompt:
                break
            if prompt == "): ":
                low = re.findall(r"Your call \((\d+)-(\d+)\): $", terminal.screen.rstrip("\n"))
                assert low, terminal.screen[-300:]
                terminal.type(low[-1][0])
                calls += 1
                continue
            hand_line = re.findall(r"Your hand: (.*)\n", terminal.screen)[-1]
            assert re.fullmatch(r"♠ [^♥]*   ♥ [^♦]*   ♦ [^♣]*   ♣ .*", hand_line), hand_line
            # Every card as it is typed (no symbol for one, a code for another), and the tricks against the calls.
            assert all(re.fullmatch(r"[2-9TJQKA][SHDC]|-", word) for group in hand_line.split("   ")
                       for word in group.split()[1:]), hand_line
            assert re.search(r"Tricks won of the calls: you \d+ of \d+, ", terminal.screen[-600:])
            legal = re.findall(r"You may play: (.*)\n", terminal.screen)[-1].split()
            if not refused:
                terminal.type("ZZ")
                terminal.read_until("Your card: ")
                assert "Not allowed: 'ZZ' is not a card: write rank then suit" in terminal.screen[terminal.mark:]
                refused = True
            hand = [card for group in hand_line.split("   ") for card in group.split()[1:] if card != "-"]
            illegal = [card for card in hand if card not in legal]
            if not explained and illegal:
                terminal.type(illegal[0])
                terminal.read_until("Your card: ")
                said = terminal.screen[terminal.mark:]
                assert f"{illegal[0]} is not allowed: " in said and "Not allowed: " not in said, said
                assert "was led and " in said  # the words of `callbreak-arena rules legal`
                explained = True
            terminal.type(legal[0].lower())
            cards += 1
        assert terminal.process.wait(30) == 0
    finally:
        terminal.close()
    assert calls == 5 and cards == 65
    assert refused and explained
    assert "The game is over:" in terminal.screen
    assert terminal.screen.count("Round ") >= 10  # each round's heading and its score lines
    assert "wins the trick" in terminal.screen or "win the trick" in terminal.screen
