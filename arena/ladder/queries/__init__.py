"""What the ladder's site shows, read from its database and its blocks' records: pure functions of a session and
the ladder's folder, each returning frozen dataclasses that the pages and the JSON API both print. One module
per thing read: :mod:`~arena.ladder.queries.leaderboard`, :mod:`~arena.ladder.queries.entrants`,
:mod:`~arena.ladder.queries.blocks` (a block, its games, the blocks in play), :mod:`~arena.ladder.queries.testing`
(the tests and scrimmages, the forms' choices) and :mod:`~arena.ladder.queries.organiser`, on what
:mod:`~arena.ladder.queries.base` holds for every page.

Every query is bounded whatever the ladder's age (the bounds are in :mod:`~arena.ladder.queries.base`): the
leaderboard is one statement over the active versions; an entrant's page reads their newest ``VERSIONS_SHOWN``
versions, ``CHECKS_SHOWN`` checks and ``RATING_POINTS`` rating points, and the records of their newest
``RECENT_BLOCKS`` done blocks only; the lists of tests and of blocks in play stop at ``TESTS_SHOWN`` and
``PLAYING_SHOWN``.

Cards are read from a block's records only once the block is done or void (``SHOWN_STATES``): of a block
queued or in play, its seats are shown and never a card, since its games are still being played.

What one entrant may see of another is public only: a failed check's detail, the bot's hand and the end of its
stderr are given to its own entrant and the organiser alone (``private``); everyone sees which check failed and
where. No text shown names a path of the server: every text that comes from a bot or a record passes
``public_text``.
"""
