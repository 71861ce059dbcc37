"""`python -m seq2attn_cli` runs the s2a command line (and is what torchrun launches)."""

try:
    from .cli.app import main
except KeyboardInterrupt:  # Ctrl-C while still starting up: end as quietly as later on
    raise SystemExit(130) from None

main()
