"""For scrapyd-deploy only: it builds its egg with ``setup.py bdist_egg`` and writes a setup.py of
its own (another project name, no package data) when there is none. Everything about the package
is in pyproject.toml; pip does not need this file.

scrapyd-deploy runs ``setup.py clean -a`` and ``setup.py bdist_egg -d TMP`` in the checkout:
their build/ and changewatch.egg-info/ go to a temporary directory, removed on exit, so a deploy
leaves nothing behind in the tree."""

import atexit
import shutil
import sys
import tempfile

from setuptools import setup

options = {}
if {"bdist_egg", "clean"} & set(sys.argv[1:]):
    scratch = tempfile.mkdtemp(prefix="changewatch-egg-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    options = {"build": {"build_base": f"{scratch}/build"}, "egg_info": {"egg_base": scratch},
               "bdist_egg": {"bdist_dir": f"{scratch}/bdist"}}
setup(options=options)
