"""``python -m cli``: the same as the ``tdk`` console script."""

from cli.main import main

main()
