"""The parity scripts' check list: each check counted, failures printed and
turned into the exit status."""
import sys


class Checker:
    def __init__(self):
        self.checks = 0
        self.failures = []

    def __call__(self, cond, msg):
        self.checks += 1
        if not cond:
            self.failures.append(msg)
            print("FAIL", msg, file=sys.stderr)
        return cond

    def finish(self):
        print(f"{self.checks - len(self.failures)} passed, {len(self.failures)} failed")
        return 1 if self.failures else 0
