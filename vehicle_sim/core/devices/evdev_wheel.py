"""An evdev steering wheel with force feedback (FF_CONSTANT), for the hardware bridge.

No ROS here and no bridge logic: the wheel reports axis values and pressed buttons and plays the
level it is given; the caller decides. python-evdev is optional (imported only when a wheel is
requested).
"""
from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable

RawCallback = Callable[[float, float, float, float, float, frozenset], None]
# [s] without events the held values are reported again this often (and the read loop checks
# for shutdown): the kernel sends an axis only when it changes, so a wheel and pedals held still
# would look like a lost link after input_timeout_s (0.1 s by default) and the bridge would cut
# the throttle. A choice: 5x below that default; an unplugged device ends the reports.
HEARTBEAT_S = 0.02


def open_wheel(device: str, axes: tuple[str, ...], on_raw: RawCallback,
               log: Callable[[str], None]) -> EvdevWheel | None:
    """The evdev wheel named by ``device`` ('auto': first with FF_CONSTANT), or None.

    Every way of not getting one (not requested, python-evdev missing, no such device, no
    permission, missing axes) ends in exactly one ``log`` line and None.
    """
    if not device:
        log("evdev input off (evdev_device ''); steering rig input by UDP only")
        return None
    try:
        import evdev
        from evdev import ecodes
    except ImportError:
        log(f"evdev_device {device!r} requested but python-evdev is not installed "
            "(pip install evdev); continuing without a wheel")
        return None
    codes = [ecodes.ecodes.get(name) for name in axes]
    if None in codes:
        log(f"evdev_axes {axes} contains an unknown code; continuing without a wheel")
        return None
    path = _find_ff_wheel(evdev, ecodes, codes[0]) if device == "auto" else device
    if path is None:
        log("evdev_device 'auto': no input device with FF_CONSTANT and the steering axis; "
            "continuing without a wheel")
        return None
    try:
        dev = evdev.InputDevice(path)
        caps = dev.capabilities(absinfo=False)
    except OSError as exc:
        log(f"evdev device {path} cannot be opened ({exc.strerror}); continuing without a wheel")
        return None
    missing = [n for n, c in zip(axes, codes) if c not in caps.get(ecodes.EV_ABS, [])]
    if missing:
        dev.close()
        log(f"evdev device {path} has no axis {', '.join(missing)}; continuing without a wheel")
        return None
    wheel = EvdevWheel(dev, tuple(codes), on_raw, ecodes.FF_CONSTANT in caps.get(ecodes.EV_FF, []))
    log(f"evdev wheel {path} ({dev.name}), force feedback "
        f"{'FF_CONSTANT' if wheel.has_ff else 'not supported'}")
    return wheel


def _find_ff_wheel(evdev, ecodes, steering_code: int) -> str | None:
    for path in sorted(evdev.list_devices()):
        try:
            dev = evdev.InputDevice(path)
        except OSError:
            continue
        caps = dev.capabilities(absinfo=False)
        dev.close()
        if (ecodes.FF_CONSTANT in caps.get(ecodes.EV_FF, [])
                and steering_code in caps.get(ecodes.EV_ABS, [])):
            return path
    return None


class EvdevWheel:
    """Reads axes/buttons of an evdev wheel; plays ONE FF_CONSTANT effect updated in place.

    Axis values and pressed buttons go to ``on_raw(now_s, steer, throttle, brake, clutch,
    buttons)`` at every SYN_REPORT, and every ``HEARTBEAT_S`` without events while the device is
    there (the values held). After SYN_DROPPED (the kernel's buffer overflowed: events were lost)
    the events up to the next SYN_REPORT are discarded and the state is read back from the device
    (linux/Documentation/input/event-codes.rst), so a pedal released during the overflow is not
    held down. ``set_level`` hands the newest level to a writer thread, so a
    slow USB device never blocks the caller (the platform loop).
    """

    def __init__(self, dev, codes: tuple[int, ...], on_raw: RawCallback, has_ff: bool):
        from evdev import ecodes, ff
        self.dev, self.codes, self.on_raw, self.has_ff = dev, codes, on_raw, has_ff
        self._ec = ecodes
        self.values = {c: float(dev.absinfo(c).value) for c in codes}
        self.pressed = set(dev.active_keys())
        self.ff_writes = 0
        self.ff_errors = 0
        self.lost = False
        self.resyncs = 0  # state read back after SYN_DROPPED
        self._stop = threading.Event()
        self._level: int | None = None
        self._cv = threading.Condition()
        self._threads = [threading.Thread(target=self._read, name="evdev-read", daemon=True)]
        if has_ff:
            if ecodes.FF_AUTOCENTER in dev.capabilities(absinfo=False).get(ecodes.EV_FF, []):
                dev.write(ecodes.EV_FF, ecodes.FF_AUTOCENTER, 0)  # our centring law replaces it
            # direction 0x4000 (linux/input.h: 90 deg); the sign of the level picks the side,
            # FfbParams.level_sign adapts drivers that differ. length 0 = play until stopped.
            self.effect = ff.Effect(
                ecodes.FF_CONSTANT, -1, 0x4000, ff.Trigger(0, 0), ff.Replay(0, 0),
                ff.EffectType(ff_constant_effect=ff.Constant(0, ff.Envelope(0, 0, 0, 0))))
            self.effect_id = dev.upload_effect(self.effect)  # uploaded once, then updated
            dev.write(ecodes.EV_FF, self.effect_id, 1)
            self._threads.append(threading.Thread(target=self._write, name="ffb", daemon=True))

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def set_level(self, level: int) -> None:
        """Queue a new FF_CONSTANT level (-32767..32767); only the newest one is written."""
        with self._cv:
            self._level = level
            self._cv.notify()

    def stop(self) -> None:
        self._stop.set()
        with self._cv:
            self._cv.notify()
        for t in self._threads:
            t.join(timeout=1.0)
        try:
            if self.has_ff:
                self._upload(0)
                self.dev.erase_effect(self.effect_id)
        except OSError:
            pass
        self.dev.close()

    def _upload(self, level: int) -> None:
        self.effect.u.ff_constant_effect.level = level
        self.dev.upload_effect(self.effect)  # effect.id set: the kernel updates it in place

    def _write(self) -> None:
        while not self._stop.is_set():
            with self._cv:
                self._cv.wait_for(lambda: self._level is not None or self._stop.is_set())
                level, self._level = self._level, None
            if level is None:
                continue
            try:
                self._upload(level)
                self.ff_writes += 1
            except OSError:
                self.ff_errors += 1

    def _read(self) -> None:
        ec = self._ec
        dropped = False  # after SYN_DROPPED: discard until SYN_REPORT, then read the state back
        while not self._stop.is_set():
            ready, _, _ = select.select([self.dev.fd], [], [], HEARTBEAT_S)
            if not ready:
                self._report()
                continue
            try:
                events = list(self.dev.read())
            except BlockingIOError:
                continue
            except OSError:  # unplugged: stop reading; the input goes stale, the bridge parks it
                self.lost = True
                return
            for e in events:
                if e.type == ec.EV_SYN and e.code == ec.SYN_DROPPED:
                    dropped = True
                elif e.type == ec.EV_SYN and e.code == ec.SYN_REPORT:
                    if dropped and not self._read_back():
                        return
                    dropped = False
                    self._report()
                elif dropped:
                    continue
                elif e.type == ec.EV_ABS and e.code in self.values:
                    self.values[e.code] = float(e.value)
                elif e.type == ec.EV_KEY:
                    (self.pressed.add if e.value else self.pressed.discard)(e.code)

    def _report(self) -> None:
        self.on_raw(time.monotonic(), *(self.values[c] for c in self.codes),
                    frozenset(self.pressed))

    def _read_back(self) -> bool:
        """The device's current axes and keys (EVIOCGABS, EVIOCGKEY); False if it is gone."""
        try:
            self.values = {c: float(self.dev.absinfo(c).value) for c in self.codes}
            self.pressed = set(self.dev.active_keys())
        except OSError:
            self.lost = True
            return False
        self.resyncs += 1
        return True
