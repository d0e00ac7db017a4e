"""What an edition is, decided from data: no store, network, clock or thread (issue 40).

`front_page` ranks each category's stories, places an event collected under several categories
once and picks the lead; `sections` makes each section's stories (told against their earlier
appearances, with their notes) and its "More headlines"; `shown_memory` decides what of a story's
memory an edition shows (its timeline, disputes, corrections); `reader_plan` decides who gets
what of it. The jobs (`digest.jobs.publish`, `digest.jobs.clustering`,
`digest.jobs.story_memory`) read the store and hand these functions what they read.
"""
