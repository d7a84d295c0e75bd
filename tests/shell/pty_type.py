#!/usr/bin/env python3
"""pty_type.py PROMPT COMMAND...: runs COMMAND (an interactive shell) on a pseudo-terminal and
types each line of stdin into it, a TAB character being a TAB key, after PROMPT has shown;
prints what the terminal showed. A shell's real line editor (readline, zle) then splits the
words and inserts the completions, as for a user at a terminal."""
import os
import re
import pty
import select
import sys
import time

prompt = sys.argv[1].encode()
command = sys.argv[2:]
lines = sys.stdin.read().splitlines()
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.execvp(command[0], command)
shown = b""


def read_until(count, timeout=10.0):
    """Reads until PROMPT has shown `count` times (or the shell ended, or the time ran out)."""
    global shown
    deadline = time.monotonic() + timeout
    while shown.count(prompt) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return
        if not chunk:
            return
        shown += chunk


read_until(1)
for line in lines + ["exit"]:
    seen = shown.count(prompt)
    os.write(fd, line.encode() + b"\r")
    read_until(seen + 1)
read_until(10**9, timeout=3.0)
os.waitpid(pid, 0)
# Without the terminal's control sequences (bracketed paste, cursor moves, colours).
text = re.sub(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B]|[=>])", "", shown.decode(errors="replace"))
sys.stdout.write(text.replace("\r", ""))
