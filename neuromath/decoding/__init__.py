"""Turning a sequence model's step function into hypotheses: greedy decoding, batched beam search with cached keys
and values, and grammar constraints that keep every hypothesis a well-formed expression."""
