"""Packaging beyond pyproject.toml: the wheel carries the bundled files.

The demo recording, connector definitions, policies and examples stay in their top-level
folders (one copy in git); they are mapped into the package as ``driftwatch/_bundle/``
with the same layout, which ``driftwatch.bundled`` reads.
"""

from setuptools import find_packages, setup

BUNDLED = {
    "driftwatch._bundle.data.demo": "data/demo",
    "driftwatch._bundle.connectors": "connectors",
    "driftwatch._bundle.policies": "policies",
    "driftwatch._bundle.examples": "examples",
}
FILES = ["*.yaml", "*.md", "*.json", "*.jsonl.gz", "*.parquet"]

setup(
    packages=[*find_packages(include=["driftwatch", "driftwatch.*"]), *BUNDLED],
    package_dir=BUNDLED,
    package_data={name: FILES for name in BUNDLED},
)
