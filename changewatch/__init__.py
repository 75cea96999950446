"""changewatch: Scrapy change monitoring that reports real changes and stays quiet otherwise."""

__version__ = "0.1.0"

from .addon import Addon
from .items import ChangeRecord, Observation

__all__ = ["Addon", "ChangeRecord", "Observation", "__version__"]
