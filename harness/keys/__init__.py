"""Keys: the one way a setting is declared, given and checked, for every command and the experiment file.

* :func:`key` declares one (a field of a frozen dataclass, its table): default, check, names, what it
  affects (:data:`RESULTS`, :data:`PERFORMANCE`, :data:`OUTPUT`), one line of doc;
* :class:`Given` is a value as the user wrote it (a file's key, a flag, ``--set KEY=VALUE``), :class:`Origins`
  where each was written, so that every refusal reads ``WHAT THE USER WROTE: expected ..., found ...``;
* :func:`coerce` checks one value against its key, :func:`build_table` a table's values and then its keys
  together (its ``check()``, raising :class:`~harness._errors.SettingError` with the key it refuses);
  :func:`table_of` builds a table from plain values, as a library user gives them.

The tables themselves live with what they configure (the experiment's in :mod:`harness.experiment`, a judgments
source's beside it, a click model's in :mod:`harness.judgments.clicks`); :mod:`harness.experiment` holds the
registry of them all and the builder every command uses.
"""

from harness.keys._coerce import build_table, coerce, field_types, table_of
from harness.keys._declare import (
    AFFECTS,
    MAX_RETRIES,
    OUTPUT,
    PERFORMANCE,
    RESULTS,
    Between,
    Check,
    between,
    declared,
    default_of,
    key,
    nonempty,
)
from harness.keys._given import FILE, FLAG, HIDDEN, SET, Given, Origins, set_given, set_value, shown

__all__ = [
    "AFFECTS",
    "FILE",
    "FLAG",
    "HIDDEN",
    "MAX_RETRIES",
    "OUTPUT",
    "PERFORMANCE",
    "RESULTS",
    "SET",
    "Between",
    "Check",
    "Given",
    "Origins",
    "between",
    "build_table",
    "coerce",
    "declared",
    "default_of",
    "field_types",
    "key",
    "nonempty",
    "set_given",
    "set_value",
    "shown",
    "table_of",
]
