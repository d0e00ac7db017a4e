"""Headline sources: DuckDuckGo news and web search (`ddg`), RSS/Atom feeds (`feeds`)."""
