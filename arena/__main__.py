"""``python -m arena``: the same as the ``callbreak-arena`` command."""

from arena.cli import main

raise SystemExit(main())
