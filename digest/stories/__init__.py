"""Stories: the same event told by several outlets is one story. Pure code, no I/O, but for
`embeddings`: the client that asks an endpoint for the article vectors clustering may compare.

`cluster_reports` groups articles into stories across outlets and runs; `plan_stories` turns a
clustering into what the store writes (titles, counts, scores); `rank_stories` and `best_first`
order a category's stories by how many outlets tell them, in how many languages, how fast they
grow and how recent; `top_picks` leaves minor stories and repeats out of a top list.
`digest.jobs.clustering` runs them on what the store keeps.
"""

from digest.stories.cluster import Clustering, Group, Report, cluster_reports
from digest.stories.plan import Candidate, StoryPlan, plan_stories
from digest.stories.rank import (
    Coverage,
    Ranked,
    StoryStats,
    best_first,
    credited,
    outlet,
    rank_stories,
    registrable_host,
    relayed,
    relayed_by,
    score,
)
from digest.stories.repeats import top_picks

__all__ = [
    "Candidate",
    "Clustering",
    "Coverage",
    "Group",
    "Ranked",
    "Report",
    "StoryPlan",
    "StoryStats",
    "best_first",
    "cluster_reports",
    "credited",
    "outlet",
    "plan_stories",
    "rank_stories",
    "registrable_host",
    "relayed",
    "relayed_by",
    "score",
    "top_picks",
]
