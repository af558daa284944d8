"""Platform frames over a serial port (a rig controller on USB-serial): raw 8N1, never blocking.

No ROS and no bridge logic here. The port is configured with the standard library's termios
(raw mode, 8 data bits, no parity, 1 stop bit, no flow control, the configured baud rate), the
same settings the SimTools / FlyPT Mover serial outputs use with Arduino-class controllers.

Latency before completeness: a motion frame that cannot leave at once is worth nothing a few
milliseconds later, so ``send`` never queues behind an old frame. When the driver still holds
more than one frame (TIOCOUTQ) or the write would block, the frame is dropped and counted. A
write error other than "would block" (USB adapter unplugged, pty closed: EIO, ENXIO, ENODEV)
closes the port, logs once and retries opening it every ``reopen_s``; the rig controller is
expected to park on its own receive watchdog meanwhile (as it must for any link loss).
"""
from __future__ import annotations

import errno
import fcntl
import os
import struct
import termios
from collections.abc import Callable

_LINK_LOST = (errno.EIO, errno.ENXIO, errno.ENODEV, errno.EBADF)


def open_raw(device: str, baud: int) -> int:
    """Open ``device`` non-blocking in raw 8N1 at ``baud`` [bit/s] (one of the node params'
    SERIAL_BAUD_RATES); return the fd; OSError or termios.error if it can't."""
    fd = os.open(device, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        iflag, oflag, cflag, lflag, _, _, cc = termios.tcgetattr(fd)
        speed = getattr(termios, f"B{baud}")
        iflag = 0  # no break/parity handling, no CR/NL translation, no XON/XOFF
        oflag = 0  # no output processing (a 0x0A byte stays 0x0A)
        lflag = 0  # no echo, no canonical mode, no signals
        cflag = (cflag & ~(termios.CSIZE | termios.PARENB | termios.CSTOPB | termios.CRTSCTS)
                 | termios.CS8 | termios.CREAD | termios.CLOCAL)
        cc[termios.VMIN], cc[termios.VTIME] = 0, 0
        termios.tcsetattr(fd, termios.TCSANOW, [iflag, oflag, cflag, lflag, speed, speed, cc])
    except (OSError, termios.error):
        os.close(fd)
        raise
    return fd


def _queued_bytes(fd: int) -> int:
    """Bytes still waiting in the driver's output queue (0 where the driver can't say)."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.TIOCOUTQ, b"\0\0\0\0"))[0]
    except OSError:
        return 0


class SerialSender:
    """Writes whole frames to one serial device; counts sent, dropped and lost; reopens."""

    def __init__(self, device: str, baud: int, log: Callable[[str], None], reopen_s: float = 1.0):
        self.device, self.baud, self.log, self.reopen_s = device, baud, log, reopen_s
        self.sent = 0
        self.dropped = 0  # link busy: the frame was skipped to keep the latency at one frame
        self.losses = 0  # times the port went away
        self.reopened = 0  # times it came back (the caller restarts its output from neutral)
        self.fd: int | None = None
        self._retry_at = 0.0
        self._open(0.0, first=True)

    @property
    def connected(self) -> bool:
        return self.fd is not None

    def send(self, payload: bytes, now_s: float) -> bool:
        """Write one frame now or drop it; True if it went out whole. The frame of the cycle the
        port comes back in is not written: it was made before the caller knew (``reopened``)."""
        if self.fd is None:
            if self._open(now_s):
                self.reopened += 1
            return False
        if _queued_bytes(self.fd) > len(payload):
            self.dropped += 1
            return False
        try:
            written = os.write(self.fd, payload)
        except BlockingIOError:
            self.dropped += 1
            return False
        except OSError as exc:
            self._lose(exc, now_s)
            return False
        if written != len(payload):  # the receiver resyncs on the next header / terminator
            self.dropped += 1
            return False
        self.sent += 1
        return True

    def stop(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _open(self, now_s: float, first: bool = False) -> bool:
        if not first and now_s < self._retry_at:
            return False
        try:
            self.fd = open_raw(self.device, self.baud)
        except (OSError, termios.error) as exc:
            self._retry_at = now_s + self.reopen_s
            if first:
                self.log(f"serial_device {self.device} cannot be opened ({_why(exc)}); "
                         f"platform frames will go there once it can (retry every "
                         f"{self.reopen_s:g} s)")
            return False
        if not first:
            self.log(f"serial link {self.device} open again at {self.baud} baud")
        return True

    def _lose(self, exc: OSError, now_s: float) -> None:
        self.losses += 1
        what = _why(exc) if exc.errno in _LINK_LOST else f"write failed: {_why(exc)}"
        self.log(f"serial link {self.device} lost ({what}); retrying every {self.reopen_s:g} s; "
                 "the rig controller must park on its own receive watchdog")
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.fd = None
        self._retry_at = now_s + self.reopen_s


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
