# ctrl-c.py XOM PROBE - runs "XOM run -- PROBE signals" on a pseudo-terminal
# of its own, types Ctrl-C and Ctrl-\, ends it with SIGTERM, and prints
# what the probe printed.  tests/cmd/native.sh counts the lines: the
# terminal sends each of these signals to its whole foreground process
# group, so the probe must get it once, not a second time through xom.
import os
import pty
import select
import signal
import sys
import time

pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "run", "--", sys.argv[2], "signals"])
out = b""


def until(text):
    """Reads the terminal until text has appeared, for up to 10 s."""
    global out
    end = time.time() + 10
    while text not in out and time.time() < end:
        if not select.select([fd], [], [], max(0, end - time.time()))[0]:
            break
        try:
            out += os.read(fd, 4096)
        except OSError:
            break


until(b"ready")
for key, line in ((b"\x03", b"got INT"), (b"\x1c", b"got QUIT")):
    os.write(fd, key)
    until(line)
# Time for a second copy to arrive, if xom were to send one.
time.sleep(0.5)
os.kill(pid, signal.SIGTERM)
until(b"got TERM")
# A broken xom must fail the test, not hang it.
if b"got TERM" not in out:
    os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
