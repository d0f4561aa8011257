"""Aggregate pg_stat_activity samples (lines 'state|wait|audit' per backend, '--' between samples):
mean backends per sample by state and wait, and how many waited on a lock over an audit table."""

import collections
import sys

counts: collections.Counter[str] = collections.Counter()
samples = audit_waits = samples_with_audit_wait = 0
waiting_now = 0
for raw in sys.stdin:
    line = raw.strip()
    if line == "--":
        samples += 1
        samples_with_audit_wait += waiting_now > 0
        waiting_now = 0
        continue
    if not line:
        continue
    state, _, audit = line.rpartition("|")
    counts[state] += 1
    if audit == "t":
        audit_waits += 1
        waiting_now += 1
n = max(samples, 1)
top = "  ".join(f"{k}:{v / n:.1f}" for k, v in counts.most_common(12))
print(
    f"samples={samples} audit-lock-waits={audit_waits / n:.2f}/sample "
    f"(in {samples_with_audit_wait} of {samples} samples)  {top}"
)
