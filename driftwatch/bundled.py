"""Files that ship inside the package: the demo recording, connectors, policies, examples.

An installed wheel carries them under ``driftwatch/_bundle/`` with the checkout's own
layout (``data/demo/``, ``connectors/``, ``policies/``, ``examples/``), so the relative
paths inside them (a connector's ``data/demo/...``, a policy's ``model.reference``) mean
the same from :func:`bundle_root` as from a checkout's root. In a checkout (or an
editable install) the top-level folders are used directly; git holds one copy.

>>> sorted(KINDS)
['connectors', 'demo', 'examples', 'policies']
>>> (bundled_path("policies") / "template.yaml").is_file()
True
>>> bundled_path("demo").relative_to(bundle_root()).as_posix()
'data/demo'
"""

from __future__ import annotations

import shutil
from pathlib import Path

from driftwatch.errors import ConfigError, SourceError

__all__ = ["EXAMPLE_KINDS", "KINDS", "bundle_root", "bundled_path", "write_examples"]

#: What is bundled, and where it sits relative to the bundle root (the checkout's layout).
KINDS = {
    "demo": "data/demo",
    "connectors": "connectors",
    "policies": "policies",
    "examples": "examples",
}

#: What :func:`write_examples` writes; ``with_data`` adds the demo recording.
EXAMPLE_KINDS = ("connectors", "policies", "examples")

_PACKAGE = Path(__file__).resolve().parent


def bundle_root() -> Path:
    """The folder the bundled files' relative paths start from."""
    for root in (_PACKAGE / "_bundle", _PACKAGE.parent):
        if all((root / rel).is_dir() for rel in KINDS.values()):
            return root
    raise SourceError(
        f"this driftwatch install has no bundled files (looked in {_PACKAGE / '_bundle'}): "
        "reinstall it from a wheel or a checkout"
    )


def bundled_path(kind: str) -> Path:
    """The folder of one kind of bundled file: ``demo``, ``connectors``, ``policies`` or
    ``examples``."""
    if kind not in KINDS:
        raise LookupError(f"no bundled {kind!r}; kinds: {', '.join(sorted(KINDS))}")
    return bundle_root() / KINDS[kind]


def _files(kind: str) -> list[Path]:
    folder = bundled_path(kind)
    return sorted(
        p for p in folder.iterdir()
        if p.is_file() and not p.name.startswith((".", "__")) and p.suffix != ".pyc"
    )


def write_examples(dest: Path, *, with_data: bool = False) -> list[Path]:
    """Copy the example connectors, policies and the retraining job into ``dest``.

    The files keep the bundle's layout (``dest/connectors/``, ``dest/policies/``,
    ``dest/examples/``, and ``dest/data/demo/`` with ``with_data``), so that from ``dest``
    the demo commands of the README work as in a checkout. Nothing is overwritten: when
    any target exists, :class:`~driftwatch.errors.ConfigError` names it and nothing is
    written. Returns the files written.
    """
    dest = Path(dest)
    kinds = [*EXAMPLE_KINDS, *(["demo"] if with_data else [])]
    plan = [(src, dest / KINDS[k] / src.name) for k in kinds for src in _files(k)]
    existing = [target for _, target in plan if target.exists()]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise ConfigError(
            f"already exists{more}; nothing written",
            file=str(existing[0]),
            hint="choose an empty folder, or move the existing files away",
        )
    written = []
    for src, target in plan:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        written.append(target)
    return written
