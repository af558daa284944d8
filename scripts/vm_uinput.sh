#!/usr/bin/env bash
# Run a command inside a throw-away QEMU guest (KVM when usable) that has /dev/uinput.
#
#   scripts/vm_uinput.sh <venv> -- <command...>        (from the repo root)
#   scripts/vm_uinput.sh /work/venv-vm -- pytest -q test/ros/test_bridge_node.py -k uinput
#   scripts/vm_uinput.sh /work/venv-vm -- python bench/bench_wheel_ffb.py 20
#
# Why: the uinput tests and benches need /dev/uinput, which a container without the uinput
# module does not have. The guest boots a stock Debian kernel (which has uinput as a module)
# with a tiny busybox initramfs, sees the HOST root filesystem read-only through 9p (qemu
# -virtfs) under a tmpfs overlay (so writes work and vanish at power-off), and runs <command>
# chrooted into it, in the current directory, with the venv's bin first in PATH and the ROS
# environment of scripts/setup.sh. The command's output goes to this terminal; its exit status
# is this script's exit status (125: the VM itself failed; the message says why).
# In the guest /tmp, /run and /dev/shm are fresh tmpfs: files the command needs must not be in
# the host's /tmp. Nothing the command writes survives the run.
# Without a working KVM (e.g. a /dev/kvm served by kvm_pvm) the guest runs under TCG emulation:
# 10-50x slower, so tests with wall-clock timeouts can time out; see step 5.
#
# The venv must be set up on the host: this script sources scripts/setup.sh with
# VSIM_VENV=<venv> first (the guest has no network, so nothing can be installed in there).
#
# Needs: x86_64, root or apt-get access for the first run (qemu-system-x86, busybox-static,
# one linux-image .deb). Kernel and initramfs live in the cache dir, never in the repo:
#   ${VSIM_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vehicle_sim/vm}
# Tunables (environment): VSIM_VM_MEM_MB (4096), VSIM_VM_CPUS (2), VSIM_VM_TIMEOUT_S (1800),
# VSIM_VM_KERNEL_PKG (default: what Debian's linux-image-amd64 depends on), VSIM_VM_ACCEL
# (kvm | tcg; default kvm when /dev/kvm is usable), VSIM_VM_BOOT_S (30: KVM boot watchdog),
# VSIM_VM_NO_SETUP=1 (do not run scripts/setup.sh: the venv is known to be current).
set -euo pipefail

die() { echo "vm_uinput: error: $*" >&2; exit 125; }
say() { echo "[vm] $*" >&2; }

usage="usage: scripts/vm_uinput.sh <venv> -- <command...>"
[ $# -ge 3 ] && [ "$2" = "--" ] || die "$usage"
VENV="$(cd "$1" 2>/dev/null && pwd)" || die "venv '$1' does not exist (create it first: VSIM_VENV=$1 scripts/setup.sh)"
[ -x "$VENV/bin/python" ] || die "$VENV has no bin/python: not a venv (create it: VSIM_VENV=$VENV scripts/setup.sh)"
shift 2

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${VSIM_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vehicle_sim/vm}"
MEM_MB="${VSIM_VM_MEM_MB:-4096}"
CPUS="${VSIM_VM_CPUS:-2}"
TIMEOUT_S="${VSIM_VM_TIMEOUT_S:-1800}"
# modules the guest loads (busybox modprobe pulls their dependencies from modules.dep)
MODULES="virtio_pci 9pnet_virtio 9p overlay uinput evdev virtio_rng"

[ "$(uname -m)" = x86_64 ] || die "only x86_64 hosts are supported (this is $(uname -m))"

mkdir -p "$CACHE" || die "cannot create the cache dir $CACHE"

# ---- 1. host tools: qemu and a static busybox (the whole userland of the initramfs) ----------
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" \
  || need_pkgs+=(busybox-static)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing ${need_pkgs[*]} and no apt-get to install them"
  [ "$(id -u)" = 0 ] || die "missing ${need_pkgs[*]}: install them (sudo apt-get install ${need_pkgs[*]})"
  say "installing ${need_pkgs[*]} (once)"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${need_pkgs[@]}"; } >"$CACHE.apt.log" 2>&1 \
    || die "apt-get install ${need_pkgs[*]} failed; see $CACHE.apt.log"
fi
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "$BUSYBOX missing after installing busybox-static"
CPIO=(cpio); command -v cpio >/dev/null || CPIO=("$BUSYBOX" cpio)  # busybox's can write newc too

# ---- 2. a Debian kernel and the modules we need, unpacked once into the cache (~70 MB) -------
PKG="${VSIM_VM_KERNEL_PKG:-}"
if [ -z "$PKG" ]; then  # the versioned package behind the meta package, e.g. linux-image-6.1.0-56-amd64
  PKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$PKG" ] || PKG=$(cd "$CACHE" && ls -d linux-image-* 2>/dev/null | tail -1)  # offline: last used
  [ -n "$PKG" ] || die "cannot find a Debian kernel package (apt-cache depends linux-image-amd64 gave nothing; run apt-get update or set VSIM_VM_KERNEL_PKG)"
fi
KDIR="$CACHE/$PKG"
if [ ! -f "$KDIR/vmlinux" ] || [ ! -f "$KDIR/modules.list" ]; then
  say "downloading $PKG (once, ~70 MB) and keeping its kernel and ${MODULES// /, } in $KDIR"
  rm -rf "$KDIR.tmp" && mkdir -p "$KDIR.tmp/deb" "$KDIR.tmp/x"
  (cd "$KDIR.tmp/deb" && apt-get download "$PKG" >/dev/null 2>&1) \
    || die "apt-get download $PKG failed (no network or unknown package)"
  dpkg-deb -x "$KDIR.tmp"/deb/*.deb "$KDIR.tmp/x" || die "cannot unpack the $PKG .deb"
  kver=$(ls "$KDIR.tmp/x/lib/modules")
  # the .deb ships no modules.dep (its postinst runs depmod): make one with busybox
  "$BUSYBOX" depmod -b "$KDIR.tmp/x" "$kver" || die "depmod of $kver failed"
  mkdir -p "$KDIR.tmp/k/modules"
  # qemu boots the uncompressed ELF directly (PVH entry, CONFIG_PVH=y in Debian's config),
  # skipping the bzImage decompressor. Debian compresses with xz: the payload starts at the
  # first xz magic in the bzImage.
  vmlinuz=$(ls "$KDIR.tmp"/x/boot/vmlinuz-*)
  off=$(LC_ALL=C grep -aboP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1)
  [ -n "$off" ] || die "no xz payload in the $PKG vmlinuz (not an xz-compressed kernel?)"
  xz -dc --single-stream < <(tail -c +$((off + 1)) "$vmlinuz") > "$KDIR.tmp/k/vmlinux" \
    || die "cannot decompress the $PKG kernel (is xz-utils installed?)"
  # keep only the modules we load and their dependencies (modules.dep: "path: dep dep ...")
  mdir="$KDIR.tmp/x/lib/modules/$kver"
  for m in $MODULES; do
    line=$(grep -E "(^|/)${m//_/[-_]}\.ko(\.[a-z]+)?:" "$mdir/modules.dep") \
      || die "module $m not found in $PKG"
    for f in ${line/:/}; do
      mkdir -p "$KDIR.tmp/k/modules/$(dirname "$f")"
      cp "$mdir/$f" "$KDIR.tmp/k/modules/$f"
    done
  done
  cp "$mdir/modules.dep" "$KDIR.tmp/k/modules/"
  echo "$MODULES" > "$KDIR.tmp/k/modules.list"
  echo "$kver" > "$KDIR.tmp/k/version"
  rm -rf "$KDIR" && mv "$KDIR.tmp/k" "$KDIR" && rm -rf "$KDIR.tmp"
fi
[ "$(cat "$KDIR/modules.list")" = "$MODULES" ] \
  || die "the module list changed since $KDIR was made: delete that directory to rebuild it"
KVER=$(cat "$KDIR/version")

# ---- 3. the initramfs: busybox, the modules we need, and /init (rebuilt when this file changes)
INITRD="$KDIR/initramfs.cpio.gz"
if [ ! -f "$INITRD" ] || [ "${BASH_SOURCE[0]}" -nt "$INITRD" ]; then
  say "building the initramfs"
  ir=$(mktemp -d) && trap 'rm -rf "$ir"' EXIT
  mkdir -p "$ir"/{bin,dev,proc,sys,host,share,rw,newroot} "$ir/lib/modules/$KVER"
  cp "$BUSYBOX" "$ir/bin/busybox"
  cp -r "$KDIR/modules/." "$ir/lib/modules/$KVER/"
  cat > "$ir/init" <<EOF
#!/bin/busybox sh
# PID 1 of the guest: load modules, mount the host root (9p, read-only) under a tmpfs overlay,
# run /share/run.sh chrooted into it, store its exit status in /share/rc, power off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc && mount -t sysfs sys /sys && mount -t devtmpfs dev /dev
dmesg -n 1                      # kernel messages off the console (they would mix with output)
stty -F /dev/console -onlcr 2>/dev/null  # plain \n on the serial console
for m in $MODULES; do modprobe \$m || echo "[vm] cannot load module \$m"; done
fail() { echo "[vm] guest error: \$*"; poweroff -f; }
o9p=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o \$o9p,ro,cache=loose hostroot /host || fail "cannot mount the host root (9p)"
mount -t 9p -o \$o9p vmshare /share || fail "cannot mount the exchange share (9p)"
mount -t tmpfs -o mode=755 rw /rw && mkdir -p /rw/upper /rw/work
if ! mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /newroot; then
  echo "[vm] overlay failed: the host root is read-only in the guest (tmpfs on /tmp, /run, ...)"
  mount --bind /host /newroot
fi
R=/newroot
mount -t proc proc \$R/proc && mount -t sysfs sys \$R/sys && mount -t devtmpfs dev \$R/dev
mkdir -p \$R/dev/pts \$R/dev/shm
mount -t devpts devpts \$R/dev/pts && mount -t tmpfs -o mode=1777 shm \$R/dev/shm
mount -t tmpfs -o mode=1777 tmp \$R/tmp && mount -t tmpfs run \$R/run
mkdir -p \$R/run/vmshare && mount --bind /share \$R/run/vmshare
ip link set lo up
hostname vsim-vm
touch /share/up                 # tells the host that the guest booted
chroot \$R /bin/bash /run/vmshare/run.sh </dev/null
echo \$? > /share/rc
sync
poweroff -f
EOF
  chmod +x "$ir/init"
  (cd "$ir" && find . | "${CPIO[@]}" -o -H newc 2>/dev/null | gzip -1) > "$INITRD.tmp" \
    || die "cannot write the initramfs"
  mv "$INITRD.tmp" "$INITRD"
  rm -rf "$ir"; trap - EXIT
fi

# ---- 4. the project environment (host side: the guest cannot install anything) ---------------
export VSIM_VENV="$VENV"
if [ "${VSIM_VM_NO_SETUP:-0}" = 1 ]; then  # the venv is known to be current: only the environment
  export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
  export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 100 ))}"
else  # reinstall vehicle_sim into the venv if a source file changed (the guest has no network)
  # shellcheck source=setup.sh
  source "$ROOT/scripts/setup.sh" >&2
fi
export PATH="$VENV/bin:$PATH"
export ROS_LOG_DIR="${ROS_LOG_DIR:-/tmp/roslog}" NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/numba}"
export PYTHONUNBUFFERED=1
# test waits (test/ros/conftest.py spin_until) x10: an emulated guest is 10-50x slower
export VSIM_TEST_TIME_SCALE="${VSIM_TEST_TIME_SCALE:-10}"
[ -t 1 ] || export PY_COLORS=0  # the guest's console is a tty: no colour codes in a log file

# the exchange dir: run.sh (command + environment) in, rc out
SHARE=$(mktemp -d "${TMPDIR:-/tmp}/vm_uinput.XXXXXX")
trap 'rm -rf "$SHARE"' EXIT
{
  echo "# written by scripts/vm_uinput.sh; runs inside the guest"
  env | grep -E '^(ROS_|RMW_|AMENT_|VSIM_|PYTHON|PY_COLORS=|NUMBA_|FASTDDS|FASTRTPS|LANG=|LC_|HOME=|USER=|PATH=)' \
    | cut -d= -f1 | sort -u | while read -r name; do printf 'export %s=%q\n' "$name" "${!name}"; done
  printf 'cd %q || exit 126\n' "$PWD"
  printf '%q ' "$@"; echo
} > "$SHARE/run.sh"

# ---- 5. boot ----------------------------------------------------------------------------------
# KVM when it works, else TCG emulation (10-50x slower: real-time figures are then meaningless
# and tests with wall-clock timeouts may time out). A /dev/kvm can exist and still not run a
# stock kernel: with kvm_pvm (PVM, "pagetable-based virtual machine", used by some cloud
# sandboxes without nested virtualisation) only PVM-enlightened guest kernels boot; a Debian
# kernel stalls in early boot. So: TCG at once when kvm_pvm is loaded, and otherwise the KVM
# guest must report "up" (a file in the share) within VSIM_VM_BOOT_S or it is killed and the run
# starts again under TCG.
BOOT_S="${VSIM_VM_BOOT_S:-30}"
run_qemu() {  # $1 = kvm | tcg; the guest's console is this terminal
  local accel
  # -arch-capabilities: with plain "-cpu host" qemu 7.2 aborts in a nested VM ("failed to set
  # MSR 0x10a"); -cpu max under TCG has the SSE4/AVX2 that numpy's wheels require
  if [ "$1" = kvm ]; then accel=(-enable-kvm -cpu host,-arch-capabilities)
  else accel=(-accel tcg,thread=multi -cpu max); fi
  rm -f "$SHARE/up" "$SHARE/rc"
  timeout --foreground "$TIMEOUT_S" qemu-system-x86_64 "${accel[@]}" -m "$MEM_MB" -smp "$CPUS" \
    -nographic -no-reboot -monitor none -chardev stdio,id=con,signal=on -serial chardev:con \
    -kernel "$KDIR/vmlinux" -initrd "$INITRD" \
    -append "console=ttyS0 quiet loglevel=1 panic=-1 rdinit=/init" \
    -nic none -device virtio-rng-pci \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$SHARE",mount_tag=vmshare,security_model=none </dev/null &
  QPID=$!
}
accel="${VSIM_VM_ACCEL:-}"
if [ -z "$accel" ]; then
  if [ -d /sys/module/kvm_pvm ]; then
    say "WARNING: /dev/kvm is PVM (kvm_pvm), which cannot boot a stock kernel:" \
        "TCG emulation (slow; timing figures meaningless)"; accel=tcg
  elif [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accel=kvm
  else say "WARNING: /dev/kvm is not usable: TCG emulation (slow; timing figures meaningless)"; accel=tcg; fi
fi
t0=$(date +%s)
say "booting $PKG under ${accel^^} (${CPUS} vCPUs, ${MEM_MB} MB): $*"
set +e
run_qemu "$accel"
if [ "$accel" = kvm ]; then
  for _ in $(seq $((BOOT_S * 10))); do
    [ -e "$SHARE/up" ] || ! kill -0 $QPID 2>/dev/null && break
    sleep 0.1
  done
  if [ ! -e "$SHARE/up" ]; then
    kill $QPID 2>/dev/null; wait $QPID 2>/dev/null
    say "WARNING: the KVM guest did not come up within ${BOOT_S} s (broken nested KVM?):" \
        "starting again under TCG emulation (slow; timing figures meaningless)"
    accel=tcg
    run_qemu tcg
  fi
fi
wait $QPID
qrc=$?
set -e
[ $qrc -eq 124 ] && die "the guest did not finish within ${TIMEOUT_S} s (VSIM_VM_TIMEOUT_S); killed"
[ $qrc -eq 0 ] || die "qemu-system-x86_64 failed (exit $qrc)"
[ -s "$SHARE/rc" ] || die "the guest powered off without an exit status (see the messages above)"
rc=$(cat "$SHARE/rc")
say "command exited with status $rc ($accel guest, $(( $(date +%s) - t0 )) s from boot to power-off)"
exit "$rc"
