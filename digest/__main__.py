from digest.runtime import stops

stops.catch_early()  # a server's SIGTERM while it imports is a stop, as later

from digest.cli import main  # noqa: E402

main()
