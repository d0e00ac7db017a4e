"""Jobs as plans: typed work units, the steps that run them, one runner interface, the run record.

A job (collect, deepen, publish) plans its work as units (`digest.jobs.units.Unit`), each with
a step registered for its kind that does one unit and returns a typed outcome; a runner runs
the units in this process or on the task queue's workers (`digest.queue`), and the job folds
the outcomes into its report. `digest.jobs.run.recorded_run` keeps each run's record and metrics.
Nothing here knows the queue, and the queue knows no job by name: it runs whatever is registered.
"""
