"""The Tensor type, dtypes, creation functions and the random state."""
