"""What the tools share: benchmark JSON, the results manifest, atomic writes, plot style, word2vec files."""
