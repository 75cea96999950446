"""Fixture sites of the example per-site spiders (changewatch/spiders/catalogue.py, board.py)."""
