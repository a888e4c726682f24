"""The file checkpoint store: snapshots of a project folder in a shadow git repository.

One repository per data dir (``<data dir>/checkpoints/git``, 0700), shared by every session and
every project: content-addressed, so a file stored once is stored once for all snapshots of all
sessions. A snapshot is a git *tree* id (no commits, no refs: ``gc`` keeps what session files
name). The project's own ``.git`` is never read nor written: git runs with its own ``GIT_DIR``,
``GIT_WORK_TREE`` set to the project folder, an index file per project folder
(``GIT_INDEX_FILE``, so the next snapshot only re-reads what changed) and an environment built from
nothing (no system or global config, ``HOME`` an empty folder, no hooks, no fsmonitor, no untracked
cache, attributes that convert nothing, no ``GIT_*`` variable of the caller's).

Left out of a snapshot, and said so (:attr:`Snapshot.skipped`): files the project's ``.gitignore``
files ignore (git reads them as work-tree files; ``.git/info/exclude`` is the project's repository
and is not read), the data dir when it is inside the project, files over :data:`SIZE_CAP`, FIFOs,
sockets and devices. Symbolic links are stored as links (never followed). Files outside the project
that ``write``/``edit`` touched are stored one by one as blobs (:attr:`Snapshot.outside`).

Restoring writes only inside the project folder: each path is walked from the folder one name at
a time with ``O_NOFOLLOW`` (a symlink in the way is refused, never followed), and a file is replaced
by renaming a new one over its name (a hard link to a file elsewhere is not written through).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.store.paths import data_home, make_private_dirs

#: Files larger than this are left out of snapshots (and listed as skipped).
SIZE_CAP = 10 * 1024 * 1024
#: More new or changed files than this in one snapshot (a home folder, a data set): none is taken.
MAX_FILES = 200_000
#: From this many files to store in one snapshot (a first one), they go into one pack file, not one
#: loose object each (git's bulk check-in, ``core.bigFileThreshold``): ~2x faster than ``git add``.
PACK_FROM = 256
#: Folders outside the snapshot (ignored, empty) looked into for FIFOs at most, per snapshot.
MAX_ASKED = 10_000
#: git's empty tree: the snapshot of an empty folder.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.symlinks=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.filemode=true",
    "core.quotePath=false",
    "core.sparseCheckout=false",
    "core.splitIndex=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "index.skipHash=false",
    "submodule.recurse=false",
    "protocol.allow=never",
)
# Highest precedence of all attribute files: no in-tree .gitattributes converts what is stored.
_ATTRIBUTES = "* -text !eol -filter -ident !working-tree-encoding\n"


def checkpoints_enabled() -> bool:
    """Whether sessions take file checkpoints (``AGENT_TUI_CHECKPOINTS=off`` turns them off)."""
    return os.environ.get("AGENT_TUI_CHECKPOINTS", "").strip().lower() not in ("off", "0", "false", "no")


class CheckpointError(Exception):
    """The store could not do what was asked (one line saying what)."""


@dataclass(frozen=True, slots=True)
class Changes:
    """Paths (relative to the project folder) added, changed and deleted between two snapshots."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.added) + len(self.changed) + len(self.deleted)

    def paths(self) -> list[str]:
        return sorted({*self.added, *self.changed, *self.deleted})

    def to_json(self, limit: int = 500) -> dict[str, list[str]]:
        return {
            "added": [_shown(p) for p in self.added[:limit]],
            "changed": [_shown(p) for p in self.changed[:limit]],
            "deleted": [_shown(p) for p in self.deleted[:limit]],
        }


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot: the project folder's tree, what was left out, and the files outside it
    (absolute path -> blob id, or None when the file did not exist)."""

    tree: str
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why)
    outside: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path a restore writes: ``action`` is ``write`` or ``delete``; ``mode`` git's
    (100644, 100755, 120000 for a link) and ``blob`` the content to write."""

    path: str
    action: str
    mode: str = ""
    blob: str = ""
    added: bool = False  # the path is not in the current snapshot


def _shown(path: str) -> str:
    """A path for an entry or a terminal: undecodable bytes as U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _exclude_line(path: str) -> str:
    """A gitignore pattern matching exactly ``path`` (relative, from the top)."""
    out = []
    for ch in path:
        if ch in "\\*?[]!#":
            out.append("\\")
        out.append(ch)
    text = "".join(out)
    if text.endswith(" "):
        text = text[:-1] + "\\ "
    return "/" + text


class CheckpointStore:
    """The shadow repository in ``root`` (default ``<data dir>/checkpoints``)."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        size_cap: int = SIZE_CAP,
        max_files: int = MAX_FILES,
    ) -> None:
        self.root = Path(root) if root is not None else data_home() / "checkpoints"
        self.git_dir = self.root / "git"
        self.size_cap = size_cap
        self.max_files = max_files  # new or changed files one snapshot takes at most
        self._ready = False

    # -- the repository -------------------------------------------------------------------------

    def _prepare(self) -> None:
        if self._ready:
            return
        make_private_dirs(self.root)
        os.chmod(self.root, 0o700)
        for sub in ("home", "indexes", "excludes", "locks"):
            make_private_dirs(self.root / sub)
        if not (self.git_dir / "HEAD").exists():
            # init reads no template hooks: --template points at an empty folder
            self._run(
                ["init", "-q", "--bare", "--template=" + str(self.root / "home"), str(self.git_dir)],
                git_dir=False,
            )
            os.chmod(self.git_dir, 0o700)
        info = self.git_dir / "info"
        make_private_dirs(info)
        attributes = info / "attributes"
        if not attributes.exists() or attributes.read_text() != _ATTRIBUTES:
            attributes.write_text(_ATTRIBUTES)
        self._ready = True

    def _env(self, cwd: str | None = None, index: Path | None = None) -> dict[str, str]:
        home = str(self.root / "home")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "XDG_CONFIG_HOME": home,
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_DIR": str(self.git_dir),
        }
        if cwd is not None:
            env["GIT_WORK_TREE"] = cwd
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def _run(
        self,
        args: Sequence[str],
        *,
        cwd: str | None = None,
        index: Path | None = None,
        input: bytes | None = None,
        excludes: Path | None = None,
        git_dir: bool = True,
        check: bool = True,
        config: Sequence[str] = (),
        literal: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        config = [*_CONFIG, f"core.excludesFile={excludes if excludes is not None else '/dev/null'}", *config]
        command = ["git"]
        for item in config:
            command += ["-c", item]
        env = self._env(cwd, index)
        if not git_dir:
            del env["GIT_DIR"]
        if not literal:  # check-ignore refuses literal pathspecs
            del env["GIT_LITERAL_PATHSPECS"]
        try:
            done = subprocess.run(
                [*command, *args],
                input=input,
                capture_output=True,
                cwd=cwd or str(self.root),
                env=env,
                check=False,
            )
        except FileNotFoundError:
            raise CheckpointError("file checkpoints need git, which is not installed") from None
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
        return done

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        with open(self.root / "locks" / key, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    @staticmethod
    def _key(cwd: str) -> str:
        return hashlib.sha256(os.fsencode(cwd)).hexdigest()[:24]

    # -- snapshots ---------------------------------------------------------------------------

    def snapshot(self, cwd: str | os.PathLike[str], outside: Iterable[str] = ()) -> Snapshot:
        """Snapshot the folder ``cwd`` (and the files ``outside`` it, one by one)."""
        self._prepare()
        top = os.path.realpath(cwd)
        if not os.path.isdir(top):
            raise CheckpointError(f"{top}: not a folder")
        if top in ("/", os.path.realpath(os.path.expanduser("~"))):
            raise CheckpointError(
                f"{top} is the home or root folder, not a project: no file checkpoints here"
            )
        key = self._key(top)
        index = self.root / "indexes" / key
        base = self.root / "excludes" / (key + ".base")
        full = self.root / "excludes" / key
        with self._locked(key):
            base_text = "".join(line + "\n" for line in self._own_excludes(top))
            _write_if_changed(base, base_text)
            listed = self._run(
                ["ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard"],
                cwd=top,
                index=index,
                excludes=base,
            ).stdout
            skipped: list[tuple[str, str]] = []
            update: list[bytes] = []  # paths whose index entry is refreshed (added, changed, deleted)
            drop: list[bytes] = []  # indexed paths that are to be left out now (grown, a FIFO)
            if listed.count(b"\0") > self.max_files:
                raise CheckpointError(
                    f"{top} has over {self.max_files:,} files that are not ignored: no file checkpoints here"
                )
            for item in listed.split(b"\0"):
                if len(item) < 3:
                    continue
                tag, raw = item[:1], item[2:]
                rel = os.fsdecode(raw)
                why = "a nested git repository" if raw.endswith(b"/") else self._skip_reason(top, rel)
                if why is None:
                    update.append(raw)
                    continue
                skipped.append((rel.rstrip("/"), why))
                if tag != b"?":
                    drop.append(raw)
            # Only the listed paths are read: no second walk of the folder (git add -A would make one).
            if drop:
                self._run(
                    ["update-index", "-z", "--force-remove", "--stdin"],
                    cwd=top,
                    index=index,
                    input=b"\0".join(drop) + b"\0",
                )
            # many files (a first snapshot): streamed into one pack, not a loose object file each
            packed = ("core.bigFileThreshold=1",) if len(update) >= PACK_FROM else ()
            if update:
                done = self._run(
                    ["update-index", "-z", "--add", "--remove", "--stdin"],
                    cwd=top,
                    index=index,
                    input=b"\0".join(update) + b"\0",
                    check=False,
                    config=packed,
                )
                if done.returncode != 0:  # an unreadable file: add what can be read, say what not
                    _write_if_changed(full, base_text + "".join(_exclude_line(p) + "\n" for p, _ in skipped))
                    added = self._run(
                        ["add", "-A", "--ignore-errors"],
                        cwd=top,
                        index=index,
                        excludes=full,
                        check=False,
                        config=packed,
                    )
                    skipped += _unreadable(added.stderr)
            tree = self._run(["write-tree"], cwd=top, index=index).stdout.decode().strip()
            known = {p for p, _ in skipped}
            skipped += [s for s in self._specials(top, tree, base) if s[0] not in known]
        return Snapshot(tree, tuple(sorted(skipped)), self._outside(top, outside))

    def _specials(self, top: str, tree: str, excludes: Path) -> list[tuple[str, str]]:
        """The FIFOs, sockets and devices in the project that are not ignored: git's listing never
        names them (it sees only files, links and folders). One ``scandir`` of each folder the
        snapshot holds (the entries' types, no stat), each opened from its parent without following
        a link; the other folders (ignored, empty, holding only such files) are asked of
        ``check-ignore`` a level at a time, and nested repositories and ``.git`` are not entered."""
        listed = self._run(["ls-tree", "-r", "-d", "-z", "--name-only", tree]).stdout
        folders = {os.fsdecode(p) for p in listed.split(b"\0") if p}
        found: list[tuple[str, str]] = []
        pending: list[str] = []  # folders the snapshot does not hold, to ask about

        def visit(fd: int, rel: str) -> None:
            with os.scandir(fd) as it:
                entries = list(it)
            if rel and rel not in folders and any(e.name == ".git" for e in entries):
                return  # a nested repository: not ours
            for entry in entries:
                path = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if path in folders:
                        with contextlib.suppress(OSError):
                            child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                            try:
                                visit(child, path)
                            finally:
                                os.close(child)
                    elif entry.name != ".git":
                        pending.append(path)
                elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                    with contextlib.suppress(OSError):
                        found.append((path, _special(entry.stat(follow_symlinks=False).st_mode)))

        root = os.open(top, _DIR_FLAGS)
        try:
            visit(root, "")
            asked = 0
            while pending and asked < MAX_ASKED:
                batch, pending = pending[: MAX_ASKED - asked], []
                asked += len(batch)
                ignored = self._ignored(top, [p + "/" for p in batch], excludes)
                for rel in batch:
                    if rel + "/" in ignored:
                        continue
                    with contextlib.suppress(OSError, CheckpointError):
                        fd = _walk(root, rel.split("/"), create=False)
                        if fd is not None:
                            try:
                                visit(fd, rel)
                            finally:
                                os.close(fd)
        finally:
            os.close(root)
        if not found:
            return []
        ignored = self._ignored(top, [p for p, _ in found], excludes)
        return [(p, why) for p, why in found if p not in ignored]

    def _ignored(self, top: str, paths: Sequence[str], excludes: Path) -> set[str]:
        """Which of ``paths`` (relative; a folder's with a trailing ``/``) the project ignores."""
        done = self._run(
            ["check-ignore", "--no-index", "-z", "--stdin"],
            cwd=top,
            input=b"".join(os.fsencode(p) + b"\0" for p in paths),
            excludes=excludes,
            check=False,
            literal=False,
        )
        return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}

    def _own_excludes(self, top: str) -> list[str]:
        """Patterns for what of ours is inside the project: the data dir, this store."""
        lines = []
        for folder in {os.path.realpath(data_home()), os.path.realpath(self.root)}:
            rel = os.path.relpath(folder, top)
            if rel == ".":
                lines.append("/*")  # the project is the data dir: nothing of it
            elif not rel.startswith(".." + os.sep) and rel != "..":
                lines.append(_exclude_line(rel) + "/")
        return sorted(lines)

    def _skip_reason(self, top: str, rel: str) -> str | None:
        try:
            st = os.lstat(os.path.join(top, rel))
        except OSError:
            return None  # deleted: git add records it
        if stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode):
            return None
        if not stat.S_ISREG(st.st_mode):
            return _special(st.st_mode)
        if st.st_size > self.size_cap:
            return f"over {self.size_cap // (1024 * 1024)} MB"
        return None

    def _outside(self, top: str, paths: Iterable[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for path in sorted(set(paths)):
            real = os.path.abspath(path)
            if _inside(real, top):
                continue
            data = _read_regular(real, self.size_cap)
            found[real] = None if data is None else self.store_blob(data)
        return found

    def store_blob(self, data: bytes) -> str:
        self._prepare()
        return self._run(["hash-object", "-w", "--no-filters", "--stdin"], input=data).stdout.decode().strip()

    # -- reading -------------------------------------------------------------------------------

    def changes(self, old: str, new: str) -> Changes:
        """What differs between tree ``old`` and tree ``new``."""
        if old == new:
            return Changes()
        added: list[str] = []
        changed: list[str] = []
        deleted: list[str] = []
        for status, path, _, _ in self._diff(old, new):
            (added if status == "A" else deleted if status == "D" else changed).append(path)
        return Changes(tuple(added), tuple(changed), tuple(deleted))

    def _diff(self, old: str, new: str) -> list[tuple[str, str, str, str]]:
        """(status, path, new mode, new blob) of each path that differs."""
        self._prepare()
        out = self._run(["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", old, new]).stdout
        parts = out.split(b"\0")
        found = []
        i = 0
        while i + 1 < len(parts):
            head = parts[i].decode()
            if not head.startswith(":"):
                i += 1
                continue
            _, mode_new, _, blob_new, status = head[1:].split(" ")
            path = os.fsdecode(parts[i + 1])
            if status[0] == "T":
                status = "M"
            found.append((status[0], path, mode_new, blob_new))
            i += 2
        return found

    def patch(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        """A unified diff of tree ``old`` against tree ``new`` (text)."""
        self._prepare()
        args = [
            "diff-tree",
            "-p",
            "-r",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            old,
            new,
        ]
        if paths:
            args += ["--", *paths]
        return self._run(args).stdout.decode("utf-8", "replace")

    def exists(self, object_id: str) -> bool:
        self._prepare()
        return self._run(["cat-file", "-e", object_id], check=False).returncode == 0

    def blobs(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The contents of blobs ``ids``."""
        if not ids:
            return {}
        self._prepare()
        wanted = list(dict.fromkeys(ids))
        out = self._run(["cat-file", "--batch"], input="".join(i + "\n" for i in wanted).encode()).stdout
        found: dict[str, bytes] = {}
        at = 0
        for blob in wanted:
            end = out.index(b"\n", at)
            head = out[at:end].decode().split()
            if len(head) < 3:
                raise CheckpointError(f"object {blob} is missing from the checkpoint store")
            size = int(head[2])
            found[blob] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return found

    # -- restoring ------------------------------------------------------------------------------

    def plan(self, current: str, target: str) -> list[FileChange]:
        """What restoring tree ``target`` over a folder whose snapshot is ``current`` writes."""
        plan = []
        for status, path, mode, blob in self._diff(current, target):
            if status == "D":
                plan.append(FileChange(path, "delete"))
            elif mode == "160000":
                continue  # a nested repository: not ours to write
            else:
                plan.append(FileChange(path, "write", mode, blob, added=status == "A"))
        # deletions first: a file that gives its name to a folder (or the other way) is gone first
        return sorted(plan, key=lambda c: c.action != "delete")

    def apply(self, cwd: str | os.PathLike[str], plan: Sequence[FileChange]) -> list[tuple[str, str]]:
        """Write ``plan`` inside ``cwd``: returns (path, why) of each change refused."""
        top = os.path.realpath(cwd)
        contents = self.blobs([c.blob for c in plan if c.action == "write"])
        refused: list[tuple[str, str]] = []
        root_fd = os.open(top, _DIR_FLAGS)
        try:
            for change in plan:
                try:
                    if change.action == "delete":
                        _delete_in(root_fd, change.path)
                    else:
                        _write_in(root_fd, change.path, contents[change.blob], change.mode)
                except (OSError, CheckpointError) as e:
                    refused.append((change.path, _why(e)))
        finally:
            os.close(root_fd)
        return refused

    def restore_outside(self, files: dict[str, str | None]) -> list[tuple[str, str]]:
        """Write the files outside the project as a snapshot held them (None: delete)."""
        contents = self.blobs([b for b in files.values() if b])
        refused = []
        for path, blob in files.items():
            try:
                parent = os.open(os.path.dirname(path) or "/", _DIR_FLAGS)
                try:
                    name = os.path.basename(path)
                    if blob is None:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(name, dir_fd=parent)
                    else:
                        _replace_file(parent, name, contents[blob], 0o644)
                finally:
                    os.close(parent)
            except OSError as e:
                refused.append((path, _why(e)))
        return refused

    # -- housekeeping -----------------------------------------------------------------------------

    def gc(self, keep: Iterable[str]) -> tuple[int, int]:
        """Drop every object not reachable from ``keep`` (tree and blob ids). Returns the bytes of
        the object store before and after."""
        self._prepare()
        before = _folder_bytes(self.git_dir / "objects")
        wanted = sorted({k for k in keep if k and self.exists(k)})
        # refs pin what is kept while git prunes the rest, then go
        lines = "".join(f"update refs/agent-tui/keep/{k} {k}\n" for k in wanted)
        self._run(["update-ref", "--stdin"], input=lines.encode())
        self._run(["reflog", "expire", "--expire=now", "--all"], check=False)
        # first snapshots are packs: one pack of what is kept, the packed rest dropped
        self._run(["repack", "-a", "-d", "-q", "--no-write-bitmap-index"])
        self._run(["prune", "--expire=now"])
        self._run(
            ["update-ref", "--stdin"],
            input="".join(f"delete refs/agent-tui/keep/{k}\n" for k in wanted).encode(),
        )
        self._run(["pack-refs", "--all", "--prune"], check=False)
        return before, _folder_bytes(self.git_dir / "objects")

    def forget_index(self, cwd: str) -> None:
        """Drop the project's index (the next snapshot re-reads every file)."""
        with contextlib.suppress(FileNotFoundError):
            (self.root / "indexes" / self._key(os.path.realpath(cwd))).unlink()


# -- writing inside the folder -----------------------------------------------------------------

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a symlink or a file is in the way in its folder; not followed"
    if isinstance(e, OSError):
        return e.strerror or str(e)
    return str(e)


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if not parts or any(p in ("", ".", "..") for p in parts) or ".git" in parts:
        raise CheckpointError("not a path inside the project")
    return parts


def _walk(root_fd: int, names: Sequence[str], create: bool) -> int | None:
    """The folder ``names`` below ``root_fd`` (made when missing and ``create``), never through a
    symlink; None when it is missing."""
    fd = os.dup(root_fd)
    try:
        for name in names:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                os.mkdir(name, 0o755, dir_fd=fd)
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_in(root_fd: int, rel: str, data: bytes, mode: str) -> None:
    parts = _parts(rel)
    parent = _walk(root_fd, parts[:-1], create=True)
    assert parent is not None
    try:
        name = parts[-1]
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(name, dir_fd=parent).st_mode):
                raise CheckpointError("a folder has its name now; not replaced")
        if mode == "120000":
            temp = f".{name}.agent-tui-restore"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent)
            os.symlink(os.fsdecode(data), temp, dir_fd=parent)
            os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        else:
            _replace_file(parent, name, data, 0o755 if mode == "100755" else 0o644)
    finally:
        os.close(parent)


def _replace_file(parent: int, name: str, data: bytes, perm: int) -> None:
    temp = f".{name}.agent-tui-restore"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp, dir_fd=parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, perm, dir_fd=parent)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, perm)
    finally:
        os.close(fd)
    os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)


def _delete_in(root_fd: int, rel: str) -> None:
    parts = _parts(rel)
    parent = _walk(root_fd, parts[:-1], create=False)
    if parent is None:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(parts[-1], dir_fd=parent).st_mode):
                raise CheckpointError("a folder has its name now; not deleted")
            os.unlink(parts[-1], dir_fd=parent)
    finally:
        os.close(parent)
    # folders the deletion emptied go too, as git's checkout removes them
    for depth in range(len(parts) - 1, 0, -1):
        up = _walk(root_fd, parts[: depth - 1], create=False)
        if up is None:
            return
        try:
            os.rmdir(parts[depth - 1], dir_fd=up)
        except OSError:
            return
        finally:
            os.close(up)


def _special(mode: int) -> str:
    """Why a file that is no regular file, link or folder is left out."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _read_regular(path: str, cap: int) -> bytes | None:
    """The content of the regular file ``path`` (None when missing or not a regular file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _unreadable(stderr: bytes) -> list[tuple[str, str]]:
    found = []
    for line in stderr.decode("utf-8", "replace").splitlines():
        # error: open("secret"): Permission denied
        if line.startswith('error: open("') and "):" in line:
            path = line[len('error: open("') : line.rindex('"):')]
            found.append((path, line.rsplit("): ", 1)[-1].lower() or "unreadable"))
    return found


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text() == text:
            return
    except FileNotFoundError:
        pass
    path.write_text(text)


def _folder_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


__all__ = [
    "EMPTY_TREE",
    "SIZE_CAP",
    "Changes",
    "CheckpointError",
    "CheckpointStore",
    "FileChange",
    "Snapshot",
    "checkpoints_enabled",
]
