"""A bundled demo site with realistic noise, and the demo that crawls it."""
