"""Input data: converting the fetched GloVe wheel, the real inverted index, what a model's data is like."""
