"""The command-line flags that name the columns of a CSV written without a header line:
``--FLAG a,b,c`` or ``--FLAG-file F`` (one name a line), for ``init``'s samples and
reference and for the commands that read a reference dataset without a policy
(``profile``, ``report --reference``), which read them as the policy's
``reference: {csv: {names: [...]}}`` is read (:mod:`driftwatch.csvnames`).

>>> names_given("a, b,c", None, "names", "ref.csv")
('a', 'b', 'c')
>>> names_given(None, None, "names", "ref.csv") is None
True
>>> names_fix("names")
'or give them: --names A,B,... (or --names-file FILE, one a line)'
"""

from __future__ import annotations

import argparse
from pathlib import Path

from driftwatch.errors import ConfigError

__all__ = ["add_names_flags", "names_fix", "names_given"]


def add_names_flags(parser: argparse.ArgumentParser, flag: str, of: str, tail: str = ""
                    ) -> None:
    """Add ``--{flag}`` and ``--{flag}-file`` to ``parser``; ``of`` says which file they
    name (``a --sample CSV``), ``tail`` what else is done with them (``; written to ...``)."""
    parser.add_argument(f"--{flag}", metavar="A,B,...",
                        help=f"the column names of {of} written without a header line, "
                        "separated by commas (a first line equal to them is skipped)" + tail)
    parser.add_argument(f"--{flag}-file", metavar="FILE",
                        help=f"as --{flag}, one name a line (blank lines and lines starting "
                        "with # left out)")


def names_fix(flag: str) -> str:
    """How a refusal of a headerless CSV says to give its names by ``--{flag}``."""
    return f"or give them: --{flag} A,B,... (or --{flag}-file FILE, one a line)"


def names_given(listed: str | None, file: str | None, flag: str, path: str | None,
                what: str = "CSV file sample") -> tuple[str, ...] | None:
    """The column names ``--{flag}`` (comma-separated) or ``--{flag}-file`` (one a line)
    give for the headerless CSV ``path`` (``what`` names it where it is missing); None when
    neither is given. A :class:`~driftwatch.errors.ConfigError` (one line, no file) says
    what cannot work."""
    if listed is not None and file is not None:
        raise ConfigError(f"give --{flag} or --{flag}-file, not both")
    if listed is None and file is None:
        return None
    if not path:
        raise ConfigError(f"--{flag}{'' if file is None else '-file'} names the columns of "
                          f"a {what}; there is none to read")
    if file is not None:
        try:
            text = Path(file).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read --{flag}-file {file}: {exc}") from None
        names = [n.strip() for n in text.splitlines()
                 if n.strip() and not n.lstrip().startswith("#")]
    else:
        assert listed is not None
        names = [n.strip() for n in listed.split(",")]
    where = f"--{flag}-file {file}" if file is not None else f"--{flag}"
    if not names or any(not n for n in names):
        raise ConfigError(f"{where}: expected column names, none of them empty; found "
                          f"{listed if file is None else len(names)!r}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{where}: column names given twice: {', '.join(twice)}")
    return tuple(names)
