"""A story's memory across runs and days (issue 31): the events of its timeline
(`events.NewEvent`) and which events its outlets' texts give (`timeline`, pure). Above
`digest.stories` (new facts, outlets) and `digest.summarize` (the figures in a text); the store
keeps the events and the jobs record them."""
