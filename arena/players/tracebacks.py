"""Where a bot's error was raised: the file and line of the bot's own code, for a ``crash`` fault's detail.

Its own module, light to import: the bot kit tells the arena the place too (``BotError``), and every import
of the kit is paid again at each start of a bot's process.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from pathlib import Path

__all__ = ["raised_at"]

# Where code that is not the bot's own lives: the arena (and its bot kit), the standard library and the
# installed packages. The place a bot's error is told is the last place of its traceback outside them.
_NOT_THE_BOTS = tuple(
    str(Path(folder).resolve()) + os.sep
    for folder in {str(Path(__file__).resolve().parents[1]), *(
        sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib"))}
    if folder
)


def raised_at(error: BaseException) -> tuple[str, int] | None:
    """Where the bot's own code raised ``error``: the file and line of the last place of its traceback
    that is not the arena's, the standard library's or an installed package's (the bot's line that
    called the library that raised), else its last place of all; ``None`` when it has no traceback.

    The file is shown relative to the working folder when it lies inside it, else by its name alone:
    never a whole path, which would show the author's folders in the records.
    """
    places = traceback.extract_tb(error.__traceback__)
    if not places:
        return None
    own = [place for place in places if not place.filename.startswith("<") and
           not os.path.realpath(place.filename).startswith(_NOT_THE_BOTS)]
    place = (own or places)[-1]
    path = Path(os.path.realpath(place.filename))
    try:
        shown_path = path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown_path = path.name
    return shown_path, place.lineno or 0
