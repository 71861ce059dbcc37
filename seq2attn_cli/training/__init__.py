"""A training run: its start and resume, the loop, the loss, validation, several processes."""
