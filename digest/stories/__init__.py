"""Stories: the same event told by several outlets is one story. Pure code, no I/O.

`cluster_reports` groups articles into stories across outlets and runs; `rank_stories` orders a
category's stories by how many outlets tell them, how diverse those are and how recent. The store
(`Store.cluster_category`, `Store.top_stories`) runs both on what it keeps.
"""

from digest.stories.cluster import Clustering, Group, Report, cluster_reports
from digest.stories.rank import (
    Coverage,
    Ranked,
    StoryStats,
    outlet,
    rank_stories,
    registrable_host,
    score,
)

__all__ = [
    "Clustering",
    "Coverage",
    "Group",
    "Ranked",
    "Report",
    "StoryStats",
    "cluster_reports",
    "outlet",
    "rank_stories",
    "registrable_host",
    "score",
]
