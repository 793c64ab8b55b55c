"""The I/O accounting cases from docs/reference/ebs-io-accounting.md#io-size-cap (AWS "Amazon EBS I/O characteristics and monitoring"), shared by the scalar physics
test (tests/domain/physics/test_physics_io.py) and the vectorised one (tests/domain/test_derived.py)."""

from __future__ import annotations

# (I/O size in KiB, the volume's I/O size cap in KiB, the I/Os it counts as)
CHUNKS_PER_IO_CASES = [
    # docs/reference/ebs-io-accounting.md#io-size-cap: "I/O size is capped at 256 KiB for SSD"; "a 1 MiB SSD I/O counts as 4 IOPS"; larger I/Os are split.
    (1024, 256, 4),
    (256, 256, 1),
    (257, 256, 2),
    (16, 256, 1),
    (4, 256, 1),
    # docs/reference/ebs-io-accounting.md#io-size-cap: HDD cap 1,024 KiB.
    (1024, 1024, 1),
    (2048, 1024, 2),
    (64, 1024, 1),
]
