#!/usr/bin/env python3
"""Write the MQSim ASCII trace of perf/mqsim's "random reads after a fill" row.

The drive of ssdconfig-chip2.xml keeps 3,900,702 logical 4 KiB pages (MQSim:
physical pages x (1 - Overprovisioning_Ratio); ssdsim's report shows the same
`ftl.logical_pages`). The trace writes every one of them once, in address
order, one 4 KiB write every FILL_GAP_NS, then, after a pause, reads
READS pages drawn uniformly at random, one every READ_GAP_NS. Both rates are
below what the drive sustains, so neither simulator queues without bound.

MQSim's line: arrival (ns), device, start sector, sectors, 0 = write / 1 = read,
separated by single spaces (MQSim splits on one space).

    mkdir -p /tmp/mq && python3 make-trace.py > /tmp/mq/fill-randread.trace

(the path fill-randread-trace.xml names).
"""
import random
import sys

LOGICAL_PAGES = 3_900_702
SECTORS_PER_PAGE = 8
FILL_GAP_NS = 60_000
READS = 1_000_000
READ_GAP_NS = 25_000
PAUSE_NS = 100_000_000
SEED = 798


def main() -> None:
    out = sys.stdout
    t = 0
    lines = []
    for lpn in range(LOGICAL_PAGES):
        lines.append(f"{t} 0 {lpn * SECTORS_PER_PAGE} {SECTORS_PER_PAGE} 0\n")
        t += FILL_GAP_NS
        if len(lines) == 65536:
            out.writelines(lines)
            lines.clear()
    t += PAUSE_NS
    rng = random.Random(SEED)
    for _ in range(READS):
        lpn = rng.randrange(LOGICAL_PAGES)
        lines.append(f"{t} 0 {lpn * SECTORS_PER_PAGE} {SECTORS_PER_PAGE} 1\n")
        t += READ_GAP_NS
        if len(lines) == 65536:
            out.writelines(lines)
            lines.clear()
    out.writelines(lines)


if __name__ == "__main__":
    main()
