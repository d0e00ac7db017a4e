"""Work spread over `digest worker` processes, on procrastinate (a task queue in PostgreSQL).

With `[queue] enabled = true` the daemon stays the one scheduler: it claims periods as before and
hands the parts of each job that parallelize to workers as tasks (`digest.queue.work`), then
waits for them and reports as in-process. `digest.queue.tasks` holds what a worker runs;
`digest.queue.queue` the connection, the schema and the waiting. Off, nothing here is imported.
"""

from digest.queue.queue import TASK_KINDS, Queue, QueueCounts

__all__ = ["TASK_KINDS", "Queue", "QueueCounts"]
