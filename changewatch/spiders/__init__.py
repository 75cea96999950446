"""changewatch spiders."""
