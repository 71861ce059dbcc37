"""The search: source ids in, the most probable output pieces out (greedy or beam)."""
