"""``changewatch evidence CHANGE_ID -o DIR``: a change's "before" and "after" as the site served
them, written out of the store (docs/evidence.md): each body in a file named by its Content-Type,
its headers beside it, and the change record. Every file is written whole (to a temporary name,
then renamed) or not at all."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..core.evidence import decompress, extension
from ..store import ChangeLogStore, KeptVersion, LogEntry, MaintainedStore, Store, StoreError
from ..store.options import redact
from .common import (
    CommandError,
    add_change_id,
    add_command,
    add_store_option,
    add_upgrade_option,
    entry_json,
    error,
    open_store,
    valid_change_id,
)

__all__ = ["add_parser", "write_evidence"]

NAME = "evidence"

#: why a version may be missing from the store, for the messages
_NOT_KEPT = ("not kept (evidence was off, or the change was found before this changewatch kept evidence) or "
             "deleted since (CHANGEWATCH_EVIDENCE_RETENTION, or the key was forgotten: CHANGEWATCH_FORGET_AFTER)")
_PAGE_CHANGES = ("field", "entities", "content")


class EvidenceError(CommandError):
    """What cannot be written out: the command's last line (exit 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 1)


def _content_type(version: KeptVersion) -> str | None:
    for name, value in json.loads(version.headers):
        if name.lower() == "content-type":
            return str(value)
    return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write(path: Path, data: bytes) -> None:
    """*data* into *path*, whole or not at all, with the permissions a new file gets (mkstemp's are 0600)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            os.fchmod(out.fileno(), 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _version_files(role: str, version: KeptVersion, folder: Path) -> list[Path]:
    """The body and headers of one kept version, written into *folder* as ``ROLE.<ext>`` and
    ``ROLE.headers.json``."""
    if version.body is None or version.compression is None:
        raise EvidenceError(f"the body {role} the change is gone from the store (its version is kept without it)")
    try:
        body = decompress(version.compression, version.body)
    except ValueError as exc:
        raise EvidenceError(f"the body {role} the change cannot be read: {exc}") from None
    name = f"{role}{extension(_content_type(version))}"
    meta = {"file": name, "url": version.url, "status": version.status, "observed_at": version.observed_at,
            "sha256": version.digest, "size": len(body), "headers": json.loads(version.headers)}
    body_path, headers_path = folder / name, folder / f"{role}.headers.json"
    _write(body_path, body)
    _write(headers_path, (json.dumps(meta, ensure_ascii=False, indent=2) + "\n").encode())
    return [body_path, headers_path]


def _no_good_page_before(store: MaintainedStore, change: LogEntry) -> bool:
    """Whether no good page of the change's key was observed before it, so that nothing before it
    can have been kept: an error whose record names no earlier good observation, or a key of
    which the store has never had a good page."""
    record = change.record
    if change.kind == "error" and "previous_observed_at" not in record and "baseline_since" not in record:
        return True
    state = store.read(change.spider, change.key) if isinstance(store, Store) else None
    return state is not None and state.last_good is None


def write_evidence(store: MaintainedStore, change_id: int, folder: Path) -> tuple[list[Path], list[str]]:
    """Write change *change_id*'s evidence into *folder*: the files written, and what is missing
    (each a sentence). EvidenceError when there is no such change or the folder cannot be written."""
    found = store.change_evidence(change_id)
    if found is None:
        raise EvidenceError(f"no change {change_id} in the store (never logged, or a delivered change deleted by "
                            "CHANGEWATCH_CHANGES_RETENTION)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written = [folder / "change.json"]
        _write(written[0], (json.dumps(entry_json(found.change), ensure_ascii=False, indent=2) + "\n").encode())
        missing = []
        kind = found.change.kind
        for role, version in (("before", found.before), ("after", found.after)):
            if version is not None:
                written += _version_files(role, version, folder)
            elif role == "after" and kind not in _PAGE_CHANGES:
                missing.append(f"change {change_id} is of kind {kind}: no version of the page is kept for it "
                               "(only changes of the page, and the baselines before them, keep one)")
            elif role == "before" and _no_good_page_before(store, found.change):
                missing.append(f"no good page was ever observed of key {found.change.key!r} before change "
                               f"{change_id}: there is no page before it to write")
            else:
                missing.append(f"the body {role} change {change_id} is {_NOT_KEPT}")
    except OSError as exc:
        raise EvidenceError(f"cannot write to {folder}: {exc.strerror or exc}") from None
    return written, missing


def run(args: argparse.Namespace) -> int:
    """Exit 0: both versions written; 1: no such change, a version not kept (what exists is
    written), or the folder cannot be written; 2: a bad argument or a store that cannot be opened."""
    wanted = valid_change_id(args)
    store: Any = open_store(args.store, upgrade=args.upgrade, protocol=ChangeLogStore,
                            purpose="give a change's evidence")
    try:
        kept: MaintainedStore | None = store if isinstance(store, MaintainedStore) else None
        if kept is None:
            raise CommandError(f"store {redact(args.store)} keeps no evidence: its backend does not implement "
                               "changewatch.store.MaintainedStore", 2)
        written, missing = write_evidence(kept, wanted, Path(args.output))
    except StoreError as exc:
        error(NAME, f"{exc}; nothing was written")
        return 1
    finally:
        store.close()
    for path in written:
        print(path)
    for sentence in missing:
        error(NAME, sentence)
    return 1 if missing else 0


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "write a change's before and after, as served, into a folder")
    add_change_id(parser)
    add_store_option(parser)
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="the folder to write into (created when missing; files of the same name are replaced)")
    add_upgrade_option(parser)
    parser.set_defaults(func=run)
