"""The command line's exit codes (documented in docs/inspect.md)."""

EXIT_OK = 0
EXIT_DAMAGE = 1  # verify found damage, or the file does not read as a .meh file
EXIT_USAGE = 2  # bad arguments (argparse uses 2 as well)
EXIT_IO = 3  # the file cannot be opened, read or written (missing, held, exists)
EXIT_NOT_FOUND = 4  # no such record, agent or scene
EXIT_MISSING_EXTRA = 5  # an optional extra is not installed (memhop[mcp], memhop[notebook])
