"""Whether a predictions file ``init`` read whole can show drift at the window it writes.

The policy ``init`` writes raises a tier only after :data:`PERSISTENCE` windows in a row
over its threshold. A public table split into train and scored rows (UCI's German credit:
1,000 rows in all) often scores fewer records than two windows of the default 1,000: a
replay of it then closes one window, however much its records drift, and reports every
window at tier ``none``. ``init`` reads the sample's first ``--rows`` records, so where it
read fewer the file holds no more, and it warns with a window that fits.

>>> short_file_warning("scored.data", n=400, pane=1000, limit=2000)[:60]
'warning: scored.data holds 400 records, fewer than 2 windows'
>>> short_file_warning("scored.csv", n=2000, pane=1000, limit=2000) is None  # read in part
True
"""

from __future__ import annotations

__all__ = ["PERSISTENCE", "fitting_min_labelled", "fitting_pane", "short_file_warning"]

#: Windows in a row over a tier's threshold before the tier counts (``persistence:``).
PERSISTENCE = 2
#: The fewest outcomes ``init`` asks of a window before its label signals are reported:
#: fewer, and an AUC rests on a handful of bad loans
MIN_LABELLED_FLOOR = 50


def fitting_min_labelled(pane: int) -> int | None:
    """``detectors.min_labelled`` for windows of ``pane`` records, where the policy's
    default asks more outcomes than half a window holds: every label signal (AUC, the bad
    rate, calibration) would stay unreported however many outcomes joined. None where the
    default fits.

    >>> fitting_min_labelled(250), fitting_min_labelled(60), fitting_min_labelled(1000)
    (125, 50, None)
    """
    from driftwatch.policy.settings import DetectorSettings

    default = int(DetectorSettings.model_fields["min_labelled"].default)
    if 2 * default <= pane:
        return None
    return max(MIN_LABELLED_FLOOR, pane // 2)


def fitting_pane(n: int) -> int:
    """The window ``init`` suggests for a file of ``n`` records: ``2 * PERSISTENCE``
    windows, so a drift in the file's second half can persist over a tier's windows.

    >>> fitting_pane(400), fitting_pane(3)
    (100, 1)
    """
    return max(1, n // (2 * PERSISTENCE))


def short_file_warning(name: str, *, n: int, pane: int, limit: int) -> str | None:
    """The warning for a predictions sample of ``n`` records, read with at most ``limit``
    (so the whole file where ``n < limit``), that a replay cuts into fewer than
    :data:`PERSISTENCE` windows of ``pane`` records (the last one partial); None where it
    gives that many, or was read in part."""
    closed = -(-n // pane)  # the last one partial: replay closes it where the file ends
    if n >= limit or closed >= PERSISTENCE:
        return None
    return (f"warning: {name} holds {n} records, fewer than {PERSISTENCE} windows of {pane} "
            f"(a tier counts after {PERSISTENCE} windows in a row over its threshold), so a "
            f"replay of it alone reports no drift however its records move; if it is the "
            f"whole stream, run init again with --pane {fitting_pane(n)} (smaller windows "
            "make PSI noisier: see the policy's calibrated thresholds)")
