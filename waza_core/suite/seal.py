"""A secret of this user that tells a suite cache waza wrote here from one it did not.

Why: the suite cache lives in a folder others may write (a CI cache restored from a shared
store, docs/safety.md), so each line is checked again before it is used: the eval line against
the eval schema with jsonschema-rs, ~10 ms of every warm command (importing it, compiling the
composed schema: a tenth of a warm ``waza validate``), and each task line by its shape, ~2.8 us
(0.28 s of a warm 100,000-task run). Lines that waza itself wrote, each after checking it, need
no second check, provided waza can tell so. The cache file's header carries ``seal``: an
HMAC-SHA256, under a key only this user can read, of the cache's fingerprint and the exact bytes
of every line after the header (~50 ms for the 24 MB of 100,000 tasks). When it matches, no line
is checked again; when it does not (no seal, another key, one byte changed), every line is
checked as before, and the file is written again, sealed.

The key: 32 random bytes in ``$XDG_STATE_HOME/waza/suite-cache.key`` (``~/.local/state/waza``
when unset), not in the cache folder: whoever can write that folder must not be able to read
the key. The folder is made 0700, the file 0600, once, atomically (a complete file linked into
place, so a reader never sees half a key). It is used only when it is a regular file (opened
without following a link) of this user, with no permission for anyone else, of 32 bytes, in a
folder of this user's (not a link) that nobody else can write, and when that folder and the
cache folder are not one inside the other; else there is no key, nothing is sealed and every
line is checked, as without this module. The seal also names the cache file (its fingerprint
and file name), so one suite's sealed file copied under another's name is not sealed there.

A key is only as secret as its folder: a CI job must not restore ``$XDG_STATE_HOME/waza`` (or
all of ``~/.local``) from a cache others can write, or a key they chose would seal their lines.
"""

from __future__ import annotations

import hmac
import os
import stat
from pathlib import Path

from waza_core import untrusted

KEY_BYTES = 32
KEY_NAME = "suite-cache.key"

_loaded: list[bytes | None] = []


def state_dir() -> Path | None:
    """Where the key lives: ``$XDG_STATE_HOME/waza``, else ``~/.local/state/waza``; None when
    that is not an absolute path (a relative ``XDG_STATE_HOME`` or ``HOME`` would put the key
    under the current folder: a checkout, or a folder a CI job caches)."""
    base = os.environ.get("XDG_STATE_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "waza"
    try:
        home = Path.home()
    except RuntimeError:  # no home folder to be found
        return None
    return home / ".local" / "state" / "waza" if home.is_absolute() else None


def key(create: bool = False, apart_from: Path | None = None) -> bytes | None:
    """This user's key, read once per process; made first when ``create`` and there is none.
    None when it cannot be read or made, is not private (see the module's docstring), or its
    folder and ``apart_from`` (the cache folder) lie one inside the other: a key kept with the
    cache, or cached with it, is no secret from whoever writes the cache."""
    folder = state_dir()
    if folder is None or (apart_from is not None and _overlap(folder, apart_from)):
        return None
    if _loaded and (_loaded[0] is not None or not create):
        return _loaded[0]
    found = _read(folder) if _private_folder(folder) else None
    if found is None and create:
        found = _make(folder)
    _loaded[:] = [found]
    return found


def seal(secret: bytes, name: str, lines: bytes | memoryview) -> str:
    """The seal of the ``lines`` of a cache file named by ``name`` (its fingerprint and file
    name): hex HMAC-SHA256."""
    mac = sealer(secret, name)
    mac.update(lines)
    return mac.hexdigest()


def sealer(secret: bytes, name: str) -> hmac.HMAC:
    """An HMAC to be given the lines of a cache file named by ``name`` part by part (a file
    written as it is made); its ``hexdigest()`` is then :func:`seal` of them all."""
    return hmac.new(secret, name.encode("utf-8", "surrogateescape") + b"\n", "sha256")


def matches(secret: bytes, name: str, lines: bytes | memoryview, claimed: object) -> bool:
    """Whether ``claimed`` (from the cache file: anything) is the seal of ``lines``."""
    return (isinstance(claimed, str) and len(claimed) == 64 and claimed.isascii()
            and hmac.compare_digest(seal(secret, name, lines), claimed))


def _overlap(a: Path, b: Path) -> bool:
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    return ra == rb or ra.startswith(rb.rstrip(os.sep) + os.sep) or rb.startswith(ra.rstrip(os.sep) + os.sep)


def _private_folder(folder: Path) -> bool:
    """A folder (not a link to one) of this user that nobody else can write: else someone
    could swap the key."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _read(folder: Path) -> bytes | None:
    """The key in ``folder``: a regular file, not a link (``untrusted.open_regular``), of this
    user, with no permission for anyone else, of :data:`KEY_BYTES`; else None."""
    try:
        with untrusted.open_regular(folder / KEY_NAME, limit=KEY_BYTES) as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid != os.geteuid() or st.st_mode & 0o077:
                return None
            data = fh.read(KEY_BYTES + 1)
    except (OSError, untrusted.UntrustedInput):
        return None
    return data if len(data) == KEY_BYTES else None


def _make(folder: Path) -> bytes | None:
    """A new key in ``folder``, or the one another process put there first."""
    tmp = folder / f".{KEY_NAME}.{os.getpid()}.tmp"
    made = False
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _private_folder(folder):
            return None
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        made = True
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, folder / KEY_NAME)  # never replaces a key already there
        except FileExistsError:
            pass
    except OSError:
        return None
    finally:
        if made:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return _read(folder)
