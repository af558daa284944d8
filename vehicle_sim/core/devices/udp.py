"""The hardware bridge's UDP input: steering-rig packets in (platform frames go out from
core.devices.frame_sender, to ONE configured address).

No ROS here and no bridge logic: the receiver moves bytes and counts what went wrong; the caller
decides. Input datagrams from senders outside the allowed peers are dropped, counted and
handed to ``on_dropped`` (the caller says so: a rig left on the default peers is not silent).
"""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

_RECV_BYTES = 2048  # larger than any valid input packet, so oversized ones are seen as such
_POLL_S = 0.1  # how often the blocking read checks for shutdown


class UdpReceiver:
    """Thread receiving rig input datagrams; datagrams from other senders are dropped."""

    def __init__(self, host: str, port: int, allowed_peers: tuple[str, ...],
                 on_packet: Callable[[bytes, tuple[str, int], float], None],
                 on_dropped: Callable[[tuple[str, int]], None] = lambda addr: None):
        self.allowed = frozenset(allowed_peers)
        self.on_packet, self.on_dropped = on_packet, on_dropped
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.bind((host, port))
        except OSError as exc:
            self.sock.close()
            raise ValueError(f"input_host/input_port: cannot bind UDP {host}:{port} "
                             f"({exc.strerror})") from None
        self.sock.settimeout(_POLL_S)
        self.dropped = 0  # sender not in allowed_peers
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rig-input", daemon=True)

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)
        self.sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data, addr = self.sock.recvfrom(_RECV_BYTES)
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                continue
            if addr[0] not in self.allowed:
                self.dropped += 1
                self.on_dropped(addr)
                continue
            self.on_packet(data, addr, time.monotonic())
