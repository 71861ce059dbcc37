"""The network: embeddings and a bidirectional encoder, attention, the decoder, and int8 for CPU."""
