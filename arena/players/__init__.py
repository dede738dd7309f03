"""Players behind one interface, and the table runner that seats four of them for a game."""
