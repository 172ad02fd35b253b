"""What the PNG charts of tune and plan share: matplotlib's Agg backend (imported only when a plot
is asked) and saving a figure with a usage error when the path cannot take it."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(plt: Any, fig: Any, path: Path) -> Path:
    from tdk.errors import UsageError

    try:
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    except OSError as exc:
        raise UsageError(
            f"--plot {path}: cannot write it ({exc.strerror or exc})",
            hint="choose a writable path ending in .png",
        ) from None
    except ValueError as exc:  # an unknown image format
        raise UsageError(f"--plot {path}: {exc}", hint="name a .png file") from None
    finally:
        plt.close(fig)
    return path
