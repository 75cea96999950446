"""What a crawl runs on besides Scrapy: settings parsed once, stats, worker processes."""

from .._deprecated import module_getattr

# ``changewatch.runtime`` was one module (StoreRunner, WorkerPool, spider_name): they still resolve.
__getattr__ = module_getattr(__name__)
