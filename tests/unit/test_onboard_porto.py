"""``init`` on Porto Seguro's shape: integer columns named ``*_cat`` are category codes
(categorical whatever their count)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from driftwatch.onboard.infer import column_kind


def test_only_whole_numbers_named_as_codes_are_categorical() -> None:
    """ps_car_11_cat's 104 codes were binned as numbers."""
    codes = pd.Series(np.arange(200) % 104, name="ps_car_11_cat")
    assert column_kind(codes) == ("categorical", "integer codes named like categories "
                                  "(*_cat), 104 distinct values")
    assert column_kind(codes.rename("ps_car_11"))[0] == "numeric"
    assert column_kind((codes + 0.5).rename("ps_car_11_cat"))[0] == "numeric"
    assert column_kind(pd.Series(["a", "b"], name="x_cat"))[0] == "categorical"
