"""What every part of a process may use: metrics, progress, child processes, closing clients."""
