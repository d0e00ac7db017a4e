"""What a subscriber may choose, and the checks of each choice: the table of preferences that the
command line, the preferences page and the JSON come from, and what a channel's URL may be."""
