"""What each command does beyond parsing its arguments, and how it prints and logs."""
