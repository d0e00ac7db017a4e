"""Work spread over `digest worker` processes, on procrastinate (a task queue in PostgreSQL).

With `[queue] enabled = true` the daemon stays the one scheduler: it claims periods as before and
its jobs hand their units (`digest.jobs.units`) to workers as tasks through `QueueRunner`, then
wait for them and report as in-process. A task per registered unit kind, whatever job planned
it (`digest.queue.tasks`); `digest.queue.queue` holds the connection, the schema and the
waiting. Off, nothing here is imported.
"""

from digest.queue.queue import Queue, QueueCounts
from digest.queue.tasks import QueueRunner, register

__all__ = ["Queue", "QueueCounts", "QueueRunner", "register"]
