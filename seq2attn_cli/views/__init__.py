"""What s2a draws: heatmaps, charts and cards from plain lists (no torch), and saved pictures."""
