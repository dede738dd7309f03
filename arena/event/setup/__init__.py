"""What organisers and students write: the configuration file and its tables, the bots and their kinds, the
formats, the entries, the sandbox's settings, the class roster and its submissions, and the defaults the
command line shows."""
