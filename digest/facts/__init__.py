"""What a text states, read without a model and without I/O: its sentences and words
(`text`), its claims and the check of a summary against its sources (`claims`), its figures
and what they count, where outlets disagree or revised (`figures`), the names it gives
(`names`), and whether a translation kept them (`translation_check`). The summaries
(`digest.summarize`), the story memory (`digest.memory`) and delivery read facts from here;
nothing here imports them.
"""
