"""The exceptions turnkeeper raises; every one is a :class:`TurnkeeperError`."""


class TurnkeeperError(Exception):
    """Base class of every error turnkeeper raises."""


class ReadError(TurnkeeperError, ValueError):
    """The input cannot be read: not UTF-8, not JSON, or a file that cannot be opened."""


class FormatError(TurnkeeperError, ValueError):
    """Valid JSON, but of no format turnkeeper reads, or not of the format asked for."""


class RepairError(TurnkeeperError):
    """A repair failed closed: it would have altered a thinking block (a turnkeeper bug).

    Nothing was changed and nothing should be sent.
    """


class StoreError(TurnkeeperError):
    """The turn store could not be opened or written, or a response is not a whole response."""


class AttemptsError(TurnkeeperError, ValueError):
    """An attempts document (``Attempts.from_json``) that is not one."""


class OptionError(TurnkeeperError, ValueError):
    """An option value turnkeeper does not take (``thinking="maybe"``, an unknown format, a
    profile file that cannot be read)."""


__all__ = [
    "TurnkeeperError",
    "ReadError",
    "FormatError",
    "RepairError",
    "StoreError",
    "AttemptsError",
    "OptionError",
]
