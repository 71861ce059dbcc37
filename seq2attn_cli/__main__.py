"""`python -m seq2attn_cli` runs the s2a command line (and is what torchrun launches)."""

from .cli import main

main()
