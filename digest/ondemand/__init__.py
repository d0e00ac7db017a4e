"""The quick path: `news`, `query` and `extract` answered within seconds."""
