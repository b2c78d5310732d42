"""Studies of answers and plans against oracles, and profile reading: analogies, every word, 8-bit
certificates, filter candidates, SASS stalls."""
