"""The MLflow model registry as driftwatch uses it, and the river models it stores.

Names are imported on first use (MLflow is a heavy import).
"""

from __future__ import annotations

from driftwatch.lazy import lazy_attributes

__all__ = [
    "FeatureEncoder",
    "MlflowRegistry",
    "ModelVersionInfo",
    "RegistryUnavailableError",
    "Retry",
    "RiverModel",
    "embedded_tracking_uri",
    "ensure_champion",
]

_WHERE = {
    "FeatureEncoder": "driftwatch.registry.river_model",
    "MlflowRegistry": "driftwatch.registry.mlflow_registry",
    "ModelVersionInfo": "driftwatch.registry.versions",
    "RegistryUnavailableError": "driftwatch.registry.retry",
    "Retry": "driftwatch.registry.retry",
    "RiverModel": "driftwatch.registry.river_model",
    "embedded_tracking_uri": "driftwatch.registry.versions",
    "ensure_champion": "driftwatch.registry.bootstrap",
}


__getattr__ = lazy_attributes(__name__, _WHERE)
