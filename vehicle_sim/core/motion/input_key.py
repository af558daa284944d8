"""The rig input's shared key: read from a file only its owner can read, as ssh does with keys.

The key authenticates rig input packets (``wire.encode_input_packet`` / ``decode_input_packet``
with ``key``). ``read_key_file`` refuses, with a ValueError naming the file (never its content),
a path that is not absolute, a missing or non-regular file, a file not owned by this user, one
readable or writable by group or others (``mode & 0o077``), and a key shorter than
``MIN_KEY_BYTES``. Make one with ``head -c 32 /dev/urandom > rig.key && chmod 600 rig.key``.
"""
from __future__ import annotations

import os
import stat

MIN_KEY_BYTES = 16  # HMAC-SHA256 keys shorter than this are refused (32 random bytes advised)
MAX_KEY_BYTES = 4096  # a key file is a few random bytes: anything larger is the wrong file


def read_key_file(path: str) -> bytes:
    """The key bytes of ``path`` (the whole file, taken as raw bytes); ValueError if refused."""
    where = f"input_key_file {path!r}"
    if not os.path.isabs(path):
        raise ValueError(f"{where}: must be an absolute path")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as exc:
        raise ValueError(f"{where}: cannot open ({exc.strerror})") from None
    try:  # checks on the opened file: it cannot be swapped between the check and the read
        _check_private(os.fstat(fd), where)
        key = os.read(fd, MAX_KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"{where}: {len(key)} bytes, a key needs at least {MIN_KEY_BYTES} "
                         "(head -c 32 /dev/urandom > rig.key)")
    if len(key) > MAX_KEY_BYTES:
        raise ValueError(f"{where}: larger than {MAX_KEY_BYTES} bytes, not a key file")
    return key


def _check_private(st: os.stat_result, where: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{where}: not a regular file")
    if st.st_uid != os.geteuid():
        raise ValueError(f"{where}: owned by uid {st.st_uid}, not by this user "
                         f"(uid {os.geteuid()})")
    if st.st_mode & 0o077:
        raise ValueError(f"{where}: permissions {stat.S_IMODE(st.st_mode):04o} are too open, "
                         "group and others must have no access (chmod 600)")
