#!/usr/bin/env python3
"""pty_shell.py DONE COMMAND: a shell in a terminal of its own, as root's is (t6002).

/bin/sh runs on a new pseudo-terminal, its controlling terminal, reading its commands
from it. It is given COMMAND; once the file DONE exists (COMMAND ends by creating it)
it is given `exit`. Whatever was pushed into the terminal's input meanwhile (TIOCSTI)
comes before that `exit`, so the shell runs it, as an interactive shell would after
the command. What the terminal showed goes to stdout; the status is the shell's.
"""
import os
import pty
import select
import sys
import time


def main():
    done, command = sys.argv[1], sys.argv[2]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv("/bin/sh", ["sh"])
    shown = bytearray()

    def drain(wait):
        r, _, _ = select.select([fd], [], [], wait)
        if r:
            try:
                shown.extend(os.read(fd, 4096))
            except OSError:  # the shell has gone: EIO
                return False
        return True

    os.write(fd, command.encode() + b"\n")
    deadline = time.time() + 300
    while not os.path.exists(done) and time.time() < deadline and drain(0.1):
        pass
    # what was pushed is read before this line; give the shell time to read it
    drain(0.5)
    os.write(fd, b"exit\n")
    while time.time() < deadline and drain(0.1):
        pass
    if time.time() >= deadline:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(shown.decode(errors="replace"))
    sys.exit(os.waitstatus_to_exitcode(status))


main()
