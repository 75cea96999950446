"""What the worker pool raises when a task does not come back with its result."""

from __future__ import annotations

import json

__all__ = ["WorkerCrashed", "WorkerError", "WorkerTaskError", "WorkerTimeout"]


class WorkerError(Exception):
    """A task could not be run to completion by the pool."""


class WorkerTimeout(WorkerError):
    """The task ran past its timeout (``limit``, seconds); its worker was killed and replaced."""

    def __init__(self, message: str, limit: float):
        super().__init__(message)
        self.limit = limit


class WorkerCrashed(WorkerError):
    """The worker died while running the task (``how``: the signal or exit code); replaced."""

    def __init__(self, message: str, how: str):
        super().__init__(message)
        self.how = how


class WorkerTaskError(WorkerError):
    """The task function raised in the worker; the message carries the exception type, text and
    the worker-side traceback (also as ``type_name``, ``text`` and ``traceback``)."""

    def __init__(self, type_name: str, text: str, traceback: str):
        super().__init__(f"{type_name}: {text}\n\nTraceback in the worker:\n{traceback}")
        self.type_name = type_name
        self.text = text
        self.traceback = traceback

    @classmethod
    def from_reply(cls, body: bytes) -> WorkerTaskError:
        error = json.loads(body)
        return cls(error["type"], error["message"], error["traceback"])
