"""Reusable layers, registered by name where a config chooses them: attention kernels (standard, TP, relative, tree
relative), positional encodings (sinusoidal, learned, tree), group attention, tree cells and the level-batched tree
engine, the soft stack, RNN baselines."""
