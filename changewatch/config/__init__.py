"""The changewatch settings: one table (:mod:`.table`), strict parsers (:mod:`.parsers`), one
frozen :class:`ChangewatchConfig` parsed in one place (:mod:`.model`). A leaf: it imports
``changewatch.core`` and third-party libraries only, so every feature may import it."""

from .errors import ConfigError, VantageError, error_message, said_at_start
from .model import ASYNCIO_REACTOR, GUARDED_RESOLVER, ChangewatchConfig, check_reactor, check_resolver, default_workers
from .parsers import BadValue
from .table import DEFAULT_COMPARISONS, REMOVED_SETTINGS, SETTINGS, SETTINGS_BY_NAME, Setting, check_names

__all__ = ["ASYNCIO_REACTOR", "DEFAULT_COMPARISONS", "GUARDED_RESOLVER", "REMOVED_SETTINGS", "SETTINGS",
           "SETTINGS_BY_NAME", "BadValue", "ChangewatchConfig", "ConfigError", "Setting", "VantageError", "check_names",
           "check_reactor", "check_resolver", "default_workers", "error_message", "said_at_start"]
